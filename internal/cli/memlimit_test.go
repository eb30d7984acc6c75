package cli

import "testing"

func TestMemoryLimit(t *testing.T) {
	const base = "clusters = A, B, C\nA.bootstrap.servers = 127.0.0.1:9092\nB.bootstrap.servers = 127.0.0.1:9093\nC.bootstrap.servers = 127.0.0.1:9094\n"
	tests := []struct {
		name string
		body string
		want int64
	}{
		{name: "one flow, default buffer.memory", body: base + "A->B.enabled = true\n",
			want: 64<<20 + 2*32<<20 + 32<<20 + 2*16<<20}, // and a long link's 32 MiB
		{name: "buffer.memory set on the target producer", body: base + "A->B.enabled = true\nB.producer.buffer.memory = 8388608\n",
			want: 64<<20 + 2*8<<20 + 2*16<<20},
		{name: "two flows add up", body: base + "A->B.enabled = true\nA->C.enabled = true\nC.producer.buffer.memory = 67108864\n",
			want: 64<<20 + (2*32<<20 + 32<<20 + 2*16<<20) + (2*64<<20 + 2*16<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cf := configFlags{file: writeFile(t, tt.body)}
			_, plan, err := cf.load()
			if err != nil {
				t.Fatal(err)
			}
			if got := memoryLimit(plan); got != tt.want {
				t.Fatalf("memoryLimit = %d MiB, want %d MiB", got>>20, tt.want>>20)
			}
		})
	}
}
