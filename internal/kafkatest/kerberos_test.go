package kafkatest

import (
	"strings"
	"testing"
)

func TestParseKerberos(t *testing.T) {
	const good = "REALM=STRAIT.TEST\n" +
		"KDC=127.0.0.1:30001\n" +
		"KRB5_CONFIG=/tmp/x/kdc/krb5.conf\n" +
		"SERVICE_NAME=kafka\n" +
		"BROKER_PRINCIPAL=kafka/127.0.0.1@STRAIT.TEST\n" +
		"BROKER_KEYTAB=/tmp/x/kdc/kafka.keytab\n" +
		"CLIENT_PRINCIPAL=strait@STRAIT.TEST\n" +
		"CLIENT_KEYTAB=/tmp/x/kdc/strait.keytab\n"
	tests := []struct {
		name    string
		out     string
		want    Kerberos
		wantErr string
	}{
		{
			name: "every fact",
			out:  good,
			want: Kerberos{
				Dir: "/tmp/x/kdc", Realm: "STRAIT.TEST", KDCAddr: "127.0.0.1:30001", Krb5Conf: "/tmp/x/kdc/krb5.conf",
				ServiceName: "kafka", BrokerPrincipal: "kafka/127.0.0.1@STRAIT.TEST", BrokerKeytab: "/tmp/x/kdc/kafka.keytab",
				ClientPrincipal: "strait@STRAIT.TEST", ClientKeytab: "/tmp/x/kdc/strait.keytab",
			},
		},
		{
			name: "unknown keys and blank lines are ignored",
			out:  "\n" + good + "LATER_ADDITION=1\n\n",
			want: Kerberos{
				Dir: "/tmp/x/kdc", Realm: "STRAIT.TEST", KDCAddr: "127.0.0.1:30001", Krb5Conf: "/tmp/x/kdc/krb5.conf",
				ServiceName: "kafka", BrokerPrincipal: "kafka/127.0.0.1@STRAIT.TEST", BrokerKeytab: "/tmp/x/kdc/kafka.keytab",
				ClientPrincipal: "strait@STRAIT.TEST", ClientKeytab: "/tmp/x/kdc/strait.keytab",
			},
		},
		{name: "missing facts", out: "REALM=STRAIT.TEST\nKDC=127.0.0.1:30001\n", wantErr: "printed no BROKER_KEYTAB, BROKER_PRINCIPAL, CLIENT_KEYTAB, CLIENT_PRINCIPAL, KRB5_CONFIG, SERVICE_NAME"},
		{name: "empty value", out: strings.Replace(good, "CLIENT_KEYTAB=/tmp/x/kdc/strait.keytab", "CLIENT_KEYTAB=", 1), wantErr: "printed no CLIENT_KEYTAB"},
		{name: "garbage", out: good + "kdc up\n", wantErr: `unexpected line "kdc up"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseKerberos(tc.out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tc.want {
				t.Errorf("got %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestKerberosNeedsSecurity(t *testing.T) {
	_, err := setUp(Options{Clusters: 1, Kerberos: true})
	if err == nil || !strings.Contains(err.Error(), "Kerberos needs Security") {
		t.Fatalf("setUp(Kerberos without Security) = %v, want an error saying Kerberos needs Security", err)
	}
}
