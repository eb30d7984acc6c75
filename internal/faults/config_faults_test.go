//go:build faults

package faults

import (
	"strings"
	"testing"
	"time"

	"strait/internal/kafkatest"
)

// TestDataProducerAcksNotAllRefused: the data producer must wait for every in-sync
// replica (acks=all, MM2's default). With acks=0 franz-go gets no answer and resends
// forever; with acks=1 a leader change loses acknowledged records. `run` and `check` must
// refuse both with exit code 2 and an error naming the key.
func TestDataProducerAcksNotAllRefused(t *testing.T) {
	for _, acks := range []string{"0", "1"} {
		t.Run("acks="+acks, func(t *testing.T) {
			cfg := flowA().config(t, kafkatest.Name(t, "acks"), "B.producer.acks = "+acks)
			for _, args := range [][]string{{"run", cfg}, {"check", "--offline", cfg}} {
				s := startStrait(t, args...)
				code := s.wait(t, 20*time.Second)
				out := s.out.String()
				if code != 2 || !strings.Contains(out, "B.producer.acks") {
					t.Errorf("strait %s with B.producer.acks=%s: exit code %d, want 2 and an error naming B.producer.acks; output:\n%s", args[0], acks, code, tail(out, 20))
				}
			}
		})
	}
}
