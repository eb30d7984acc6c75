package batch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCheckLevel checks Kafka's level ranges at their edges.
func TestCheckLevel(t *testing.T) {
	tests := []struct {
		codec   Codec
		level   int
		errWith string // "" when Kafka accepts the level
	}{
		{Gzip, -1, ""}, {Gzip, 1, ""}, {Gzip, 9, ""},
		{Gzip, 0, "must be between 1 and 9, or -1 (the default)"},
		{Gzip, 10, "must be between 1 and 9, or -1"}, {Gzip, -2, "must be between 1 and 9, or -1"},
		{Lz4, 1, ""}, {Lz4, 9, ""}, {Lz4, 17, ""},
		{Lz4, 0, "must be between 1 and 17"}, {Lz4, 18, "must be between 1 and 17"}, {Lz4, -1, "must be between 1 and 17"},
		{Zstd, -131072, ""}, {Zstd, 0, ""}, {Zstd, 3, ""}, {Zstd, 22, ""},
		{Zstd, -131073, "must be between -131072 and 22"}, {Zstd, 23, "must be between -131072 and 22"},
		{Snappy, 1, "snappy has no compression levels"}, {None, 1, "none has no compression levels"},
	}
	for _, tt := range tests {
		err := CheckLevel(tt.codec, tt.level)
		switch {
		case tt.errWith == "" && err != nil:
			t.Errorf("%s level %d: %v, want no error", tt.codec, tt.level, err)
		case tt.errWith != "" && (err == nil || !strings.Contains(err.Error(), tt.errWith)):
			t.Errorf("%s level %d: error %v, want one containing %q", tt.codec, tt.level, err, tt.errWith)
		}
	}
	for c, want := range map[Codec]string{Gzip: "compression.gzip.level", Lz4: "compression.lz4.level", Zstd: "compression.zstd.level", Snappy: "", None: ""} {
		if got := LevelKey(c); got != want {
			t.Errorf("LevelKey(%s) = %q, want %q", c, got, want)
		}
	}
}

// TestCompressionKgo checks the mapping of Kafka's levels to franz-go's
// (the libraries' own constants, never Kafka's numbers), and that Kafka's
// default level is franz-go's default, as when the key is unset.
func TestCompressionKgo(t *testing.T) {
	tests := []struct {
		c    Compression
		want kgo.CompressionCodec
	}{
		{Compression{None, 0}, kgo.NoCompression()},
		{Compression{Snappy, 0}, kgo.SnappyCompression()},
		{Compression{Gzip, 0}, kgo.GzipCompression()},
		{Compression{Gzip, -1}, kgo.GzipCompression()},
		{Compression{Gzip, 1}, kgo.GzipCompression().WithLevel(1)},
		{Compression{Gzip, 9}, kgo.GzipCompression().WithLevel(9)},
		{Compression{Lz4, 0}, kgo.Lz4Compression()},
		{Compression{Lz4, 9}, kgo.Lz4Compression()}, // Kafka's default: lz4-java's fast compressor
		{Compression{Lz4, 1}, kgo.Lz4Compression()},
		{Compression{Lz4, 5}, kgo.Lz4Compression()},
		{Compression{Lz4, 6}, kgo.Lz4Compression().WithLevel(int(lz4.Level1))},
		{Compression{Lz4, 8}, kgo.Lz4Compression().WithLevel(int(lz4.Level1))},
		{Compression{Lz4, 10}, kgo.Lz4Compression().WithLevel(int(lz4.Level1))},
		{Compression{Lz4, 11}, kgo.Lz4Compression().WithLevel(int(lz4.Level2))},
		{Compression{Lz4, 12}, kgo.Lz4Compression().WithLevel(int(lz4.Level3))},
		{Compression{Lz4, 17}, kgo.Lz4Compression().WithLevel(int(lz4.Level8))},
		{Compression{Zstd, 0}, kgo.ZstdCompression()},
		{Compression{Zstd, -131072}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedFastest))},
		{Compression{Zstd, 1}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedFastest))},
		{Compression{Zstd, 3}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedDefault))},
		{Compression{Zstd, 5}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedDefault))},
		{Compression{Zstd, 6}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedBetterCompression))},
		{Compression{Zstd, 10}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedBestCompression))},
		{Compression{Zstd, 22}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedBestCompression))},
	}
	for _, tt := range tests {
		got, err := tt.c.Kgo()
		if err != nil {
			t.Errorf("%s: %v", tt.c, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: franz-go codec %+v, want %+v", tt.c, got, tt.want)
		}
	}
	for _, c := range []Compression{{Gzip, 10}, {Lz4, 18}, {Zstd, 23}, {Snappy, 1}, {Codec(5), 0}} {
		if _, err := c.Kgo(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestRecompressLevels recompresses the same batch at a low and a high
// level of each codec: the high level gives a smaller batch (so the level
// reaches the library and is not silently its default), both decode to
// the source's records, Kafka's default level gives what no level gives,
// and one Recompressor switches levels from call to call. Rebuild
// compresses at the level too.
func TestRecompressLevels(t *testing.T) {
	src := build(t, testRecords(2000), None, 0)
	h, _ := Parse(src)
	var r Recompressor
	recompress := func(c Compression) []byte {
		t.Helper()
		out, got, err := r.Recompress(nil, src, h, c)
		if err != nil {
			t.Fatal(err)
		}
		checkRecompressed(t, src, out, got, c.Codec)
		return out
	}
	for _, tt := range []struct {
		codec               Codec
		low, high, kafkaDef int
	}{
		{Gzip, 1, 9, -1},
		{Lz4, 1, 17, 9},
		{Zstd, 1, 22, 3},
	} {
		t.Run(tt.codec.String(), func(t *testing.T) {
			low := recompress(Compression{tt.codec, tt.low})
			high := recompress(Compression{tt.codec, tt.high})
			if len(high) >= len(low) {
				t.Errorf("level %d gave %d bytes, level %d %d: want fewer at the higher level", tt.high, len(high), tt.low, len(low))
			}
			if again := recompress(Compression{tt.codec, tt.low}); !bytes.Equal(again, low) {
				t.Errorf("level %d after level %d: %d bytes, first %d", tt.low, tt.high, len(again), len(low))
			}
			if def, unset := recompress(Compression{tt.codec, tt.kafkaDef}), recompress(Compression{Codec: tt.codec}); !bytes.Equal(def, unset) {
				t.Errorf("Kafka's default level %d gave %d bytes, no level %d", tt.kafkaDef, len(def), len(unset))
			}

			lowRB, err := r.Rebuild(src, h, h.BaseOffset+1, Compression{tt.codec, tt.low})
			if err != nil {
				t.Fatal(err)
			}
			highRB, err := r.Rebuild(src, h, h.BaseOffset+1, Compression{tt.codec, tt.high})
			if err != nil {
				t.Fatal(err)
			}
			if len(highRB.Data) >= len(lowRB.Data) {
				t.Errorf("rebuilt: level %d gave %d bytes, level %d %d", tt.high, len(highRB.Data), tt.low, len(lowRB.Data))
			}
			_, lowRecs := decoded(t, lowRB.Data)
			_, highRecs := decoded(t, highRB.Data)
			if len(lowRecs) != len(highRecs) || len(lowRecs) != int(h.NumRecords)-1 {
				t.Fatalf("rebuilt: %d and %d records, want %d", len(lowRecs), len(highRecs), h.NumRecords-1)
			}
			for i := range lowRecs {
				if !bytes.Equal(lowRecs[i].Value, highRecs[i].Value) || !bytes.Equal(lowRecs[i].Key, highRecs[i].Key) {
					t.Fatalf("rebuilt: record %d differs between levels", i)
				}
			}
		})
	}

	// A level Kafka refuses is an error, and dst stays as it was.
	for _, c := range []Compression{{Gzip, 10}, {Lz4, -1}, {Zstd, 23}, {Snappy, 2}} {
		out, got, err := r.Recompress([]byte("dst"), src, h, c)
		if err == nil || !strings.Contains(err.Error(), "must") || string(out) != "dst" || got != h {
			t.Errorf("%+v: error %v, dst %q, header %+v", c, err, out, got)
		}
	}
}
