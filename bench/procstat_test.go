package main

import "testing"

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    procStats
		wantErr bool
	}{
		{
			name: "java",
			in:   "4242 (java) S 1 4242 4242 0 -1 4194560 95120 0 12 0 1234 567 0 0 20 0 45 0 9999 4000000000 100000 18446744073709551615",
			want: procStats{Comm: "java", UserSeconds: 12.34, SysSeconds: 5.67},
		},
		{
			name: "comm with spaces and parentheses",
			in:   "7 (my (odd) proc) R 1 7 7 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 1 1 1",
			want: procStats{Comm: "my (odd) proc", UserSeconds: 1, SysSeconds: 0.5},
		},
		{name: "truncated", in: "7 (x) R 1 2 3", wantErr: true},
		{name: "no comm", in: "garbage", wantErr: true},
		{name: "not numbers", in: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a b 0 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStat() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("parseStat() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name             string
		in               string
		wantHWM, wantRSS int64
	}{
		{
			name:    "both",
			in:      "Name:\tjava\nVmPeak:\t 5000000 kB\nVmHWM:\t  1048576 kB\nVmRSS:\t   524288 kB\nThreads:\t45\n",
			wantHWM: 1 << 30, wantRSS: 1 << 29,
		},
		{name: "kernel thread without memory", in: "Name:\tkthreadd\nState:\tS (sleeping)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hwm, rss := parseStatus([]byte(tt.in))
			if hwm != tt.wantHWM || rss != tt.wantRSS {
				t.Errorf("parseStatus() = %d, %d; want %d, %d", hwm, rss, tt.wantHWM, tt.wantRSS)
			}
		})
	}
}

func TestReadProcStatsSelf(t *testing.T) {
	st, err := readProcStats(pidSelf(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.PeakRSSBytes <= 0 || st.RSSBytes <= 0 || st.PeakRSSBytes < st.RSSBytes {
		t.Errorf("readProcStats(self) = %+v: want 0 < RSS <= peak RSS", st)
	}
}
