package coord

import (
	"reflect"
	"strings"
	"testing"
)

func TestMetadataEncoding(t *testing.T) {
	units := cat(us("orders", 2, 0), us("audit", 1))
	rates := map[Unit]float64{{"orders", 0}: 1200.4, {"audit", 1}: 0}
	released := map[Unit]float64{{"orders", 1}: 5000}
	got := string(encodeMetadata(Claim{Node: "host-1", Settings: "c0ffee", Slot: 2, Units: sortedUnits(units), Control: true, Rates: rates}, 3, released))
	want := `{"version":1,"node":"host-1","settings":"c0ffee","rejoins":3,"control":true,"slot":2,` +
		`"topics":[{"topic":"audit","partitions":[1],"rates":[0]},{"topic":"orders","partitions":[0,2],"rates":[1200,-1]}],` +
		`"released":[{"topic":"orders","partitions":[1],"rates":[5000]}]}`
	if got != want {
		t.Fatalf("metadata\n got %s\nwant %s", got, want)
	}
	c, err := decodeMetadata([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	wantClaim := Claim{
		Node: "host-1", Settings: "c0ffee", Control: true, Slot: 2, Units: cat(us("audit", 1), us("orders", 0, 2)),
		Rates: map[Unit]float64{{"orders", 0}: 1200, {"audit", 1}: 0, {"orders", 1}: 5000},
	}
	if !reflect.DeepEqual(c, wantClaim) {
		t.Errorf("decoded %+v, want %+v", c, wantClaim)
	}

	// Nothing held, no rate known: the smallest document.
	if got := string(encodeMetadata(Claim{Slot: -1}, 0, nil)); got != `{"version":1}` {
		t.Errorf("empty metadata: %s", got)
	}
	if got := string(encodeMetadata(Claim{Node: "n", Slot: -1, Units: us("t", 0), Rates: map[Unit]float64{}}, 0, nil)); got != `{"version":1,"node":"n","topics":[{"topic":"t","partitions":[0]}]}` {
		t.Errorf("metadata without known rates: %s", got)
	}
}

func TestAssignmentEncoding(t *testing.T) {
	p := Plan{Units: cat(us("a", 0, 1), us("b", 3)), Control: true, Rejoin: true, Rates: map[Unit]float64{{"a", 1}: 7}, Slot: 0}
	got := string(encodeAssignment(p))
	want := `{"version":1,"control":true,"rejoin":true,"slot":0,"topics":[{"topic":"a","partitions":[0,1],"rates":[-1,7]},{"topic":"b","partitions":[3]}]}`
	if got != want {
		t.Fatalf("assignment\n got %s\nwant %s", got, want)
	}
	back, err := decodeAssignment([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("decoded %+v, want %+v", back, p)
	}
	if empty, err := decodeAssignment(nil); err != nil || !reflect.DeepEqual(empty, Plan{Slot: -1}) {
		t.Errorf("an empty assignment decodes to %+v, %v", empty, err)
	}
}

func TestDecodeLaterVersions(t *testing.T) {
	// A later version may add fields; a member of version 1 reads what it knows.
	c, err := decodeMetadata([]byte(`{"version":2,"node":"n","zone":"eu-1","topics":[{"topic":"t","partitions":[4],"lag":[9]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Claim{Node: "n", Units: us("t", 4), Slot: -1}); !reflect.DeepEqual(c, want) {
		t.Errorf("decoded %+v, want %+v", c, want)
	}
	p, err := decodeAssignment([]byte(`{"version":3,"topics":[{"topic":"t","partitions":[1]}],"extra":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Plan{Units: us("t", 1), Slot: -1}); !reflect.DeepEqual(p, want) {
		t.Errorf("decoded %+v, want %+v", p, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, doc, wantErr string
	}{
		{"not JSON", `strait`, "invalid character"},
		{"no version", `{"node":"n"}`, "no version"},
		{"rates do not match partitions", `{"version":1,"topics":[{"topic":"t","partitions":[0,1],"rates":[3]}]}`, `topic "t" has 2 partitions and 1 rates`},
		{"negative partition", `{"version":1,"topics":[{"topic":"t","partitions":[-1]}]}`, `topic "t" has partition -1`},
		{"bad released", `{"version":1,"released":[{"topic":"t","partitions":[-2]}]}`, `topic "t" has partition -2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeMetadata([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "decoding member metadata: ") {
				t.Errorf("decodeMetadata: %v, want an error with %q", err, tt.wantErr)
			}
			if strings.Contains(tt.doc, "released") {
				return
			}
			_, err = decodeAssignment([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "decoding an assignment: ") {
				t.Errorf("decodeAssignment: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}
