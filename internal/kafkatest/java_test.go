package kafkatest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMirrorClientOptsArgs(t *testing.T) {
	tests := []struct {
		name string
		opts MirrorClientOpts
		want []string
	}{
		{name: "defaults", want: []string{"--bootstrap", "h:1"}},
		{
			name: "everything",
			opts: MirrorClientOpts{
				Separator:   "_",
				PolicyClass: "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
				SourceAlias: "A",
				Translate:   []Translation{{RemoteAlias: "A", Group: "g:1"}, {RemoteAlias: "B", Group: "h"}},
				Hops:        []string{"A", "C"},
				Timeout:     1500 * time.Millisecond,
			},
			want: []string{
				"--bootstrap", "h:1", "--separator", "_",
				"--policy-class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
				"--source-alias", "A", "--translate", "A:g:1", "--translate", "B:h",
				"--hops", "A", "--hops", "C", "--timeout-ms", "1500",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.opts.args("h:1"); !slices.Equal(got, tc.want) {
				t.Errorf("args = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecodeMirrorClientView(t *testing.T) {
	const empty = `{"heartbeatTopics":[],"checkpointTopics":[],"upstreamClusters":[],"replicationHops":{},"translateOffsets":{}}`
	tests := []struct {
		name    string
		in      string
		want    MirrorClientView
		wantErr string
	}{
		{name: "empty", in: empty + "\n"},
		{
			name: "full, with escapes",
			in: `{"heartbeatTopics":["A.heartbeats","heartbeats"],"checkpointTopics":["A.checkpoints.internal"],` +
				`"upstreamClusters":["A"],"replicationHops":{"A":1,"Z":-1},` +
				`"translateOffsets":{"A:gr\u00fcppe\"\\":{"A.t-0":1990,"A.t-1":40}}}`,
			want: MirrorClientView{
				HeartbeatTopics:  []string{"A.heartbeats", "heartbeats"},
				CheckpointTopics: []string{"A.checkpoints.internal"},
				UpstreamClusters: []string{"A"},
				ReplicationHops:  map[string]int{"A": 1, "Z": -1},
				TranslateOffsets: map[string]map[string]int64{`A:grüppe"\`: {"A.t-0": 1990, "A.t-1": 40}},
			},
		},
		{name: "unknown field", in: `{"heartbeatTopics":[],"extra":1}`, wantErr: `unknown field "extra"`},
		{name: "missing fields", in: `{"heartbeatTopics":[],"replicationHops":{}}`, wantErr: "lacks checkpointTopics, upstreamClusters, translateOffsets"},
		{name: "two objects", in: empty + empty, wantErr: "found more output"},
		{name: "log line", in: "INFO starting\n" + empty, wantErr: "decoding the JSON object"},
		{name: "no output", in: "", wantErr: "decoding the JSON object: EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeMirrorClientView([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.HeartbeatTopics, tc.want.HeartbeatTopics) ||
				!slices.Equal(got.CheckpointTopics, tc.want.CheckpointTopics) ||
				!slices.Equal(got.UpstreamClusters, tc.want.UpstreamClusters) ||
				len(got.ReplicationHops) != len(tc.want.ReplicationHops) ||
				len(got.TranslateOffsets) != len(tc.want.TranslateOffsets) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for k, v := range tc.want.ReplicationHops {
				if got.ReplicationHops[k] != v {
					t.Errorf("ReplicationHops[%q] = %d, want %d", k, got.ReplicationHops[k], v)
				}
			}
			for k, v := range tc.want.TranslateOffsets {
				g := got.Translated(strings.SplitN(k, ":", 2)[0], strings.SplitN(k, ":", 2)[1])
				if len(g) != len(v) {
					t.Errorf("Translated(%q) = %v, want %v", k, g, v)
				}
				for tp, off := range v {
					if g[tp] != off {
						t.Errorf("Translated(%q)[%q] = %d, want %d", k, tp, g[tp], off)
					}
				}
			}
		})
	}
}

func TestTailLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "shorter than n", in: "a\nb\n", n: 5, want: "a\nb"},
		{name: "exactly n", in: "a\nb\nc", n: 3, want: "a\nb\nc"},
		{name: "longer than n", in: "a\nb\nc\nd\n", n: 2, want: "c\nd"},
		{name: "zero", in: "a\nb", n: 0, want: ""},
		{name: "empty", in: "", n: 3, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tailLines(tc.in, tc.n); got != tc.want {
				t.Errorf("tailLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestLogOpts(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		{
			name:   "log4j 2 (Kafka 4)",
			config: "/c/kafka-4.1.1/log4j2.xml",
			want:   []string{"-Dlog4j2.configurationFile=/c/kafka-4.1.1/log4j2.xml", "-Dstrait.log.file=/l"},
		},
		{
			name:   "reload4j (Kafka 3)",
			config: "/c/kafka-3.9.1/log4j.properties",
			want:   []string{"-Dlog4j.configuration=file:/c/kafka-3.9.1/log4j.properties", "-Dstrait.log.file=/l"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := logOpts(tc.config, "/l"); !slices.Equal(got, tc.want) {
				t.Errorf("logOpts = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJavaBuildHash(t *testing.T) {
	base := javaBuildHash([]byte("class A {}"), "/k/libs/*")
	tests := []struct {
		name      string
		src, cp   string
		wantEqual bool
	}{
		{name: "same inputs", src: "class A {}", cp: "/k/libs/*", wantEqual: true},
		{name: "other source", src: "class A { }", cp: "/k/libs/*"},
		{name: "other classpath", src: "class A {}", cp: "/k2/libs/*"},
		{name: "boundary moved", src: "class A {}/k", cp: "/libs/*"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := javaBuildHash([]byte(tc.src), tc.cp); (got == base) != tc.wantEqual {
				t.Errorf("javaBuildHash = %s, base %s, want equal %v", got, base, tc.wantEqual)
			}
		})
	}
}

func TestJavaProgramsEmbedded(t *testing.T) {
	if got := javaPrograms(); !slices.Contains(got, mirrorClientProbe) {
		t.Errorf("javaPrograms() = %q, want it to contain %q", got, mirrorClientProbe)
	}
}

func TestJavaProgramUnknown(t *testing.T) {
	tests := []struct {
		name    string
		program string
		wantErr string
	}{
		{name: "unknown", program: "NoSuchProgram", wantErr: `no embedded Java program "NoSuchProgram": the programs are DrillConsumer, MirrorClientProbe`},
		{name: "path", program: "../java", wantErr: `no embedded Java program "../java"`},
	}
	// The script is never run: the name is checked first.
	e := &Env{script: filepath.Join(t.TempDir(), "kafka.sh")}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			if got := e.JavaProgram(tb, tc.program); got != nil {
				t.Errorf("JavaProgram(%q) = %+v, want nil", tc.program, got)
			}
			if !strings.Contains(tb.fatal, tc.wantErr) {
				t.Errorf("fatal = %q, want it to contain %q", tb.fatal, tc.wantErr)
			}
		})
	}
}

// TestCompileJava compiles tiny programs with the real javac; it is skipped without one.
func TestCompileJava(t *testing.T) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac in PATH")
	}
	tests := []struct {
		name     string
		src      string
		javac    string // "" for the real one
		prebuilt bool   // the class is in the cache already
		wantErr  string
	}{
		{name: "compiles", src: "public class Hello { public static void main(String[] a) { System.out.print(\"hi\"); } }"},
		{name: "cached, javac not run", src: "not java", javac: "/nonexistent/javac", prebuilt: true},
		{name: "syntax error", src: "public class Hello {", wantErr: "compiling Java program Hello"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "Hello-0123")
			if tc.prebuilt {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "Hello.class"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			use := javac
			if tc.javac != "" {
				use = tc.javac
			}
			ctx, cancel := context.WithTimeout(t.Context(), javacTimeout)
			defer cancel()
			err := compileJava(ctx, use, "Hello", []byte(tc.src), "", dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if _, statErr := os.Stat(dir); statErr == nil {
					t.Errorf("a failed build left %s", dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "Hello.class")); err != nil {
				t.Errorf("no class after the build: %v", err)
			}
			leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "Hello.tmp-*"))
			if len(leftovers) > 0 {
				t.Errorf("the build left temporary dirs %v", leftovers)
			}
			if tc.prebuilt {
				return
			}
			prog := &JavaProgram{Class: "Hello", ClassPath: dir}
			out, err := prog.Command(ctx, "").Output()
			if err != nil || string(out) != "hi" {
				t.Errorf("running the program: output %q, err %v; want %q", out, err, "hi")
			}
		})
	}
}
