package config

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// SharedSettings is a digest of the settings every node of a shared flow must
// run alike: which topics it copies, under which names, and whether exactly
// once. Nodes whose digests differ would be assigned partitions they do not
// copy, or copy them differently. Connection settings (addresses, TLS,
// credentials) may differ between nodes and are left out.
func (f *Flow) SharedSettings() string {
	h := sha256.New()
	for _, v := range []string{
		f.Source, f.Target,
		strings.Join(f.Topics, "\x00"), strings.Join(f.TopicsExclude, "\x00"),
		f.Policy.Class, f.Policy.Separator, strconv.FormatBool(f.Policy.InternalSeparatorEnabled), f.Policy.Rules.String(),
		strconv.FormatBool(f.HeartbeatsReplication), strconv.FormatBool(f.ExactlyOnce),
	} {
		h.Write([]byte(v))
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}
