package config

import (
	"errors"
	"strings"
	"testing"
)

// TestOverlays reads per-cluster files and flag keys as the MM2 guide's
// command line gives them: keys land on the alias, replace the file's with a
// warning naming both places, and every origin names the overlay it came
// from.
func TestOverlays(t *testing.T) {
	main := "clusters = SOURCE, TARGET\n" +
		"SOURCE->TARGET.enabled = true\n" +
		"SOURCE.bootstrap.servers = old-source:9092\n" + // line 3, replaced
		"TARGET.bootstrap.servers = target:9092\n" +
		"topics = .*\n"
	opts := testOptions()
	opts.Overlays = []Overlay{
		{Name: "source.properties", Prefix: "SOURCE.", Data: []byte("# the source\n" +
			"bootstrap.servers = source:9093\n" + // line 2
			"security.protocol = SSL\n" +
			"ssl.truststore.location = /etc/kafka/truststore.jks\n" +
			"ssl.truststore.password = " + plainSecret + "\n")},
		{Name: "--whitelist", Data: []byte("topics = orders\\\\..*\n")},
	}
	cfg, err := Parse("mm2.properties", []byte(main), opts)
	if err != nil {
		t.Fatal(err)
	}
	src := cfg.Cluster["SOURCE"]
	if got := strings.Join(src.BootstrapServers, ","); got != "source:9093" || src.SecurityProtocol != "SSL" {
		t.Errorf("SOURCE = %s %s, want source:9093 SSL", got, src.SecurityProtocol)
	}
	f := cfg.Flows[0]
	p, ok := f.SourceConsumer.Prop("ssl.truststore.location")
	if !ok || p.Value.Reveal() != "/etc/kafka/truststore.jks" || p.Origin != (Origin{Key: "SOURCE.ssl.truststore.location", Line: 4, File: "source.properties"}) {
		t.Errorf("source consumer ssl.truststore.location = %+v", p)
	}
	if p, _ := f.SourceConsumer.Prop("ssl.truststore.password"); !p.Secret {
		t.Error("a password from an overlay is not secret")
	}
	if got := strings.Join(f.Topics, ","); got != `orders\..*` || f.Origins["topics"].File != "--whitelist" {
		t.Errorf("topics = %q from %+v", got, f.Origins["topics"])
	}
	var warnings []string
	for _, w := range cfg.Warnings {
		warnings = append(warnings, w.String())
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{
		`key "SOURCE.bootstrap.servers" (source.properties, line 2): replaces the value on line 3 of mm2.properties`,
		`key "topics" (--whitelist, line 1): replaces the value on line 5 of mm2.properties`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	var described strings.Builder
	cfg.Describe(&described)
	if strings.Contains(all+described.String(), plainSecret) {
		t.Error("the overlay's password shows")
	}
	if !strings.Contains(described.String(), "source.properties line 4: SOURCE.ssl.truststore.location") {
		t.Errorf("Describe does not name the overlay as the origin:\n%s", described.String())
	}
}

// TestOverlayErrorsNameTheirFile: a problem in a per-cluster file is
// reported at that file's line, not at a line of the configuration file.
func TestOverlayErrorsNameTheirFile(t *testing.T) {
	opts := testOptions()
	opts.Overlays = []Overlay{{Name: "target.properties", Prefix: "TARGET.", Data: []byte(
		"bootstrap.servers = target:9093\nssl.keystore.location = /nowhere/keystore.jks\n")}}
	_, err := Parse("mm2.properties", []byte("clusters = A, TARGET\nA.bootstrap.servers = a:9092\nA->TARGET.enabled = true\n"), opts)
	var errs *Errors
	if !errors.As(err, &errs) || len(*errs) != 1 {
		t.Fatalf("Parse = %v, want one error", err)
	}
	if got, want := (*errs)[0].Error(), `target.properties:2: key "TARGET.ssl.keystore.location": file "/nowhere/keystore.jks" does not exist`; !strings.HasPrefix(got, want) {
		t.Errorf("error %q, want it to start with %q", got, want)
	}
}
