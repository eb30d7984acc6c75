package kafkatest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStartOutput(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		n       int
		want    []string // summary of each cluster
		wantDir string
		wantErr string
	}{
		{
			name: "two clusters",
			out:  "a 127.0.0.1:20001 /tmp/x/a\nb 127.0.0.1:20002 /tmp/x/b\n/tmp/x\n",
			n:    2,
			want: []string{
				"a 127.0.0.1:20001 /tmp/x/a [1 127.0.0.1:20001 /tmp/x/a -]",
				"b 127.0.0.1:20002 /tmp/x/b [1 127.0.0.1:20002 /tmp/x/b -]",
			},
			wantDir: "/tmp/x",
		},
		{
			name: "several brokers and external listeners",
			out: "a 127.0.0.1:20001 /tmp/x/a\n" +
				"c 127.0.0.1:20011,127.0.0.1:20012 /tmp/x/c\n" +
				"node a:1 127.0.0.1:20001 127.0.0.1:20101 127.0.0.1:30001 /tmp/x/a\n" +
				"node c:1 127.0.0.1:20011 - - /tmp/x/c/1\n" +
				"node c:2 127.0.0.1:20012 127.0.0.1:20112 127.0.0.1:30012 /tmp/x/c/2\n" +
				"/tmp/x\n",
			n: 2,
			want: []string{
				"a 127.0.0.1:20001 /tmp/x/a [1 127.0.0.1:20001 /tmp/x/a 127.0.0.1:20101]",
				"c 127.0.0.1:20011,127.0.0.1:20012 /tmp/x/c [1 127.0.0.1:20011 /tmp/x/c/1 -] [2 127.0.0.1:20012 /tmp/x/c/2 127.0.0.1:20112]",
			},
			wantDir: "/tmp/x",
		},
		{name: "too few clusters", out: "a 127.0.0.1:20001 /tmp/x/a\n/tmp/x\n", n: 2, wantErr: "printed 1 cluster(s)"},
		{name: "no dir", out: "a 127.0.0.1:20001 /tmp/x/a\n", n: 1, wantErr: `dir ""`},
		{name: "garbage", out: "a b\n", n: 1, wantErr: `unexpected line "a b"`},
		{name: "node of no cluster", out: "a h:1 /tmp/x/a\nnode z:1 h:1 - - /tmp/x/z\n/tmp/x\n", n: 1, wantErr: "names no cluster"},
		{name: "missing node line", out: "a h:1,h:2 /tmp/x/a\nnode a:1 h:1 - - /tmp/x/a/1\n/tmp/x\n", n: 1, wantErr: "1 node line(s) for cluster a of 2 brokers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, dir, err := parseStartOutput(tc.out, tc.n)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dir != tc.wantDir {
				t.Errorf("dir = %q, want %q", dir, tc.wantDir)
			}
			if s := summary(got); !slices.Equal(s, tc.want) {
				t.Errorf("clusters = %q, want %q", s, tc.want)
			}
		})
	}
}

// summary describes each cluster as "<name> <bootstrap> <dir>" and its brokers as
// "[<id> <addr> <dir> <external|->]", checking that each broker points back to its cluster.
func summary(cs []*Cluster) []string {
	var out []string
	for _, c := range cs {
		s := fmt.Sprintf("%s %s %s", c.Name, c.Bootstrap, c.Dir)
		for _, b := range c.Brokers {
			ext := b.external
			if ext == "" {
				ext = "-"
			}
			if b.cluster != c {
				ext += " (wrong cluster)"
			}
			s += fmt.Sprintf(" [%d %s %s %s]", b.ID, b.Addr, b.Dir, ext)
		}
		out = append(out, s)
	}
	return out
}

func TestParseBootstraps(t *testing.T) {
	tests := []struct {
		name    string
		s       string
		n       int
		want    []string
		wantErr string
	}{
		{
			name: "exact",
			s:    "127.0.0.1:9092, 127.0.0.1:9192",
			n:    2,
			want: []string{"a 127.0.0.1:9092  [1 127.0.0.1:9092  -]", "b 127.0.0.1:9192  [1 127.0.0.1:9192  -]"},
		},
		{name: "more than needed", s: "h1:1,h2:2,h3:3", n: 1, want: []string{"a h1:1  [1 h1:1  -]"}},
		{name: "too few", s: "h1:1", n: 2, wantErr: "lists 1 cluster(s), but this package needs 2"},
		{name: "no port", s: "h1:1,h2", n: 2, wantErr: `entry 2 ("h2") is not host:port`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseBootstraps(tc.s, tc.n)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := summary(got); !slices.Equal(s, tc.want) {
				t.Errorf("clusters = %q, want %q", s, tc.want)
			}
		})
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "internal", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		want    string
		wantErr bool
	}{
		{name: "root itself", dir: root, want: root},
		{name: "below root", dir: deep, want: root},
		{name: "no go.mod above", dir: filepath.Dir(root), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findRoot(tc.dir)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("findRoot(%q) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}

func TestOrphans(t *testing.T) {
	tmp := t.TempDir()
	now := time.Now()
	mk := func(name, owner string, age time.Duration) {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	mk(dirPrefix+"alive", "100\n", 0)
	mk(dirPrefix+"dead", "200\n", 0)
	mk(dirPrefix+"garbled", "x\n", 0)
	mk(dirPrefix+"new-no-owner", "", time.Minute)
	mk(dirPrefix+"old-no-owner", "", 2*time.Hour)
	mk("other-dir", "200\n", 0)
	alive := func(pid int) bool { return pid == 100 }

	got := orphans(tmp, now, alive)
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	want := []string{dirPrefix + "dead", dirPrefix + "garbled", dirPrefix + "old-no-owner"}
	if !slices.Equal(got, want) {
		t.Errorf("orphans = %q, want %q", got, want)
	}
}

func TestProcessAlive(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		want bool
	}{
		{name: "this process", pid: os.Getpid(), want: true},
		{name: "no such process", pid: 1 << 30, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := processAlive(tc.pid); got != tc.want {
				t.Errorf("processAlive(%d) = %v, want %v", tc.pid, got, tc.want)
			}
		})
	}
}
