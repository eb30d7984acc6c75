package batch

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Compression is what Strait compresses batches with: a codec and Kafka's
// level for it (KIP-390: compression.gzip.level, compression.lz4.level or
// compression.zstd.level, whichever belongs to the producer's
// compression.type). Level 0 is the codec's default, as when the key is
// unset: 0 is not a level Kafka accepts for gzip or lz4, and is zstd's own
// name for its default. None and snappy have no levels.
type Compression struct {
	Codec Codec
	Level int
}

func (c Compression) String() string {
	if c.Level == 0 {
		return c.Codec.String()
	}
	return fmt.Sprintf("%s level %d", c.Codec, c.Level)
}

// LevelKey returns the Java producer key that sets c's level, "" for a
// codec without levels.
func LevelKey(c Codec) string {
	switch c {
	case Gzip, Lz4, Zstd:
		return "compression." + c.String() + ".level"
	}
	return ""
}

// CheckLevel returns nil when Kafka's producer accepts level for codec c,
// and otherwise an error saying what it accepts, as Kafka's validators do
// (GzipCompression.LevelValidator, and the ranges of CompressionType.LZ4
// and ZSTD): gzip 1 to 9 or -1, lz4 1 to 17, zstd -131072 to 22. The
// message reads after the key's name: "must be ...".
func CheckLevel(c Codec, level int) error {
	switch c {
	case Gzip:
		if level != -1 && (level < 1 || level > 9) {
			return errors.New("must be between 1 and 9, or -1 (the default)")
		}
	case Lz4:
		if level < 1 || level > 17 {
			return errors.New("must be between 1 and 17 (9 is the default)")
		}
	case Zstd:
		if level < -131072 || level > 22 {
			return errors.New("must be between -131072 and 22 (3 is the default)")
		}
	default:
		return fmt.Errorf("must not be set: %s has no compression levels", c)
	}
	return nil
}

// check reports a codec Strait cannot compress with, or a level Kafka
// would not accept for it.
func (c Compression) check() error {
	switch {
	case c.Codec < None || c.Codec > Zstd:
		return fmt.Errorf("unknown target codec %d", int8(c.Codec))
	case c.Level == 0:
		return nil
	}
	if err := CheckLevel(c.Codec, c.Level); err != nil {
		return fmt.Errorf("the %s level %w; got %d", c.Codec, err, c.Level)
	}
	return nil
}

// Kgo returns franz-go's codec for c, at the level of franz-go's
// compression library nearest to c's Kafka level. It is the one place that
// turns Kafka's levels into franz-go's, for the record path's producer
// (kafkaclient) and for the fast path's Recompressor alike.
//
// franz-go passes a level to its library as it is, and a value the
// library does not know silently becomes the library's default, so Kafka's
// numbers cannot be passed through. Level 0 (unset) is franz-go's default
// for the codec, which is what Kafka's default level means in each case:
//
//   - gzip: klauspost/compress's levels 1 (BestSpeed) to 9
//     (BestCompression) are zlib's, the ones Java's Deflater takes; they are
//     passed as they are. -1, Kafka's default, is the library's default
//     (klauspost's level 5; zlib's is 6), the same as unset, so that
//     setting the key to Kafka's default changes nothing.
//   - lz4: Kafka compresses level 9, its default, with lz4-java's fast
//     compressor, and any other level n with the HC compressor, which tries
//     up to 2^(n-1) earlier matches per position. pierrec/lz4 has the fast
//     compressor (Fast, franz-go's default) and HC levels Level1 to Level9,
//     which try up to 2^(8+k). So 9 is Fast, as in Kafka, and any other
//     level the depth nearest on a log scale: 1 to 5 Fast (pierrec has no
//     HC level below 512 tries), 6 to 8 and 10 Level1, 11 to 17 Level2 to
//     Level8. (pierrec's CCompatFast is 1: a Kafka level passed through
//     would select it.)
//   - zstd: klauspost/compress's encoder has four speeds, not zstd's 22
//     levels; its zstd.EncoderLevelFromZstd maps zstd's levels onto them:
//     below 3 (with zstd's negative fast levels) SpeedFastest, 3 to 5
//     SpeedDefault, 6 to 9 SpeedBetterCompression, 10 to 22
//     SpeedBestCompression. 0 is zstd's default, 3: SpeedDefault, as unset.
func (c Compression) Kgo() (kgo.CompressionCodec, error) {
	if err := c.check(); err != nil {
		return kgo.CompressionCodec{}, err
	}
	switch c.Codec {
	case Gzip:
		if c.Level <= 0 {
			return kgo.GzipCompression(), nil
		}
		return kgo.GzipCompression().WithLevel(c.Level), nil
	case Snappy:
		return kgo.SnappyCompression(), nil
	case Lz4:
		switch {
		case c.Level <= 5 || c.Level == 9:
			return kgo.Lz4Compression(), nil
		case c.Level <= 10:
			return kgo.Lz4Compression().WithLevel(int(lz4.Level1)), nil
		}
		return kgo.Lz4Compression().WithLevel(int(lz4.Level1 << (c.Level - 10))), nil
	case Zstd:
		if c.Level == 0 {
			return kgo.ZstdCompression(), nil
		}
		return kgo.ZstdCompression().WithLevel(int(zstd.EncoderLevelFromZstd(c.Level))), nil
	}
	return kgo.NoCompression(), nil
}
