package coord

import (
	"context"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	work := func(context.Context) ([]Unit, error) { return nil, nil }
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "defaults", cfg: Config{Group: "g", Work: work}},
		{
			name: "explicit timeouts",
			cfg:  Config{Group: "g", Work: work, SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second, HeartbeatInterval: 2 * time.Second},
		},
		{
			name:    "no group, no work",
			cfg:     Config{},
			wantErr: "coord: Group is empty\ncoord: Work is nil: every member may become the leader, which lists the work",
		},
		{
			name:    "negative and huge timeouts",
			cfg:     Config{Group: "g", Work: work, SessionTimeout: -time.Second, RebalanceTimeout: 1000 * time.Hour},
			wantErr: "coord: SessionTimeout -1s is less than 1ms\ncoord: RebalanceTimeout 1000h0m0s is more than the protocol's 2147483647 ms\ncoord: HeartbeatInterval 3s is more than a third of SessionTimeout -1s",
		},
		{
			name:    "rebalance timeout shorter than the session",
			cfg:     Config{Group: "g", Work: work, SessionTimeout: 30 * time.Second, RebalanceTimeout: 20 * time.Second},
			wantErr: "coord: RebalanceTimeout 20s is shorter than SessionTimeout 30s",
		},
		{
			name:    "heartbeats too rare for the lease",
			cfg:     Config{Group: "g", Work: work, SessionTimeout: 6 * time.Second, HeartbeatInterval: 2500 * time.Millisecond},
			wantErr: "coord: HeartbeatInterval 2.5s is more than a third of SessionTimeout 6s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("Validate: %v\nwant %s", err, tt.wantErr)
			}
		})
	}
}

func TestRunRefusesAnInvalidConfig(t *testing.T) {
	m := New(Config{Group: "g"}, nil, discard())
	if err := m.Run(t.Context()); err == nil || err.Error() != "coord: Work is nil: every member may become the leader, which lists the work" {
		t.Errorf("Run: %v", err)
	}
}
