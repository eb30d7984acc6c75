package kafkatest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ListenerGSSAPI is SASL_PLAINTEXT with GSSAPI (Kerberos) of a test bed started with
// Options.Kerberos: the broker accepts a service ticket for Kerberos.ServiceName/127.0.0.1
// from the KDC of Env.Kerberos, which Kerberos.ClientPrincipal can get with
// Kerberos.ClientKeytab.
const ListenerGSSAPI = "GSSAPI"

// kdcDirName is the realm's dir inside the test bed dir, so stop removes it with the rest.
const kdcDirName = "kdc"

// Kerberos is the MIT Kerberos realm of a test bed started with Options.Kerberos (made and
// run by scripts/kdc.sh): what a client of the GSSAPI listener needs to log in. Every file
// lives in Dir; nothing under /etc is used.
type Kerberos struct {
	// Dir holds the realm: its krb5.conf, kdc.conf, database, keytabs and kdc.log.
	Dir string
	// Realm is the realm's name, STRAIT.TEST.
	Realm string
	// KDCAddr is the KDC's 127.0.0.1:port (TCP; krb5.conf tells clients not to use UDP).
	KDCAddr string
	// Krb5Conf is the path of the realm's krb5.conf, for KRB5_CONFIG (the brokers' JVMs get
	// it as -Djava.security.krb5.conf).
	Krb5Conf string
	// ServiceName is the brokers' sasl.kerberos.service.name, "kafka".
	ServiceName string
	// BrokerPrincipal is the brokers' service principal, ServiceName/127.0.0.1@Realm, and
	// BrokerKeytab its keytab. Clients name the service after the host they dial, so a
	// client of localhost:<port> asks for ServiceName/localhost@Realm: the KDC knows that
	// principal too, but no broker holds its key, so the broker refuses its ticket.
	BrokerPrincipal string
	BrokerKeytab    string
	// ClientPrincipal is a client's principal, strait@Realm, and ClientKeytab its keytab.
	ClientPrincipal string
	ClientKeytab    string
}

// startKerberos installs MIT Kerberos if it is missing (`kdc.sh install`) and starts a
// realm in dir with `kdc.sh start`, whose watchdog stops the KDC once owner has exited.
// When the start fails it stops what it started.
func startKerberos(ctx context.Context, script, dir, owner string) (*Kerberos, error) {
	if stdout, stderr, err := runScript(ctx, script, "install"); err != nil {
		return nil, fmt.Errorf("installing MIT Kerberos with %s install: %w\n%s%s", script, err, stdout, stderr)
	}
	stdout, stderr, err := runScript(ctx, script, "start", dir, "--owner", owner)
	if err == nil {
		var k *Kerberos
		if k, err = parseKerberos(stdout); err == nil {
			return k, nil
		}
	}
	if stopErr := stopKerberos(script, dir); stopErr != nil {
		err = fmt.Errorf("%w; stopping it again: %v", err, stopErr)
	}
	return nil, fmt.Errorf("starting a Kerberos KDC in %s with %s: %w\n%s%s", dir, script, err, stdout, stderr)
}

// stopKerberos stops the KDC of dir with `kdc.sh stop` (nothing to do if none runs).
func stopKerberos(script, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if stdout, stderr, err := runScript(ctx, script, "stop", dir); err != nil {
		return fmt.Errorf("stopping the Kerberos KDC of %s: %w\n%s%s", dir, err, stdout, stderr)
	}
	return nil
}

// parseKerberos reads the KEY=VALUE lines `kdc.sh start` prints.
func parseKerberos(out string) (*Kerberos, error) {
	k := &Kerberos{}
	fields := map[string]*string{
		"REALM":            &k.Realm,
		"KDC":              &k.KDCAddr,
		"KRB5_CONFIG":      &k.Krb5Conf,
		"SERVICE_NAME":     &k.ServiceName,
		"BROKER_PRINCIPAL": &k.BrokerPrincipal,
		"BROKER_KEYTAB":    &k.BrokerKeytab,
		"CLIENT_PRINCIPAL": &k.ClientPrincipal,
		"CLIENT_KEYTAB":    &k.ClientKeytab,
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("unexpected line %q in the output of kdc.sh start: want KEY=VALUE", line)
		}
		if f := fields[key]; f != nil {
			*f = value
		}
	}
	var missing []string
	for key, f := range fields {
		if *f == "" {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("kdc.sh start printed no %s:\n%s", strings.Join(missing, ", "), out)
	}
	k.Dir = filepath.Dir(k.Krb5Conf)
	return k, nil
}

// startKDC starts the realm of a test bed that asks for Kerberos, in dir/kdc, and notes it
// in e.Kerberos.
func (e *Env) startKDC(dir, owner string) error {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	k, err := startKerberos(ctx, e.kdcScript, filepath.Join(dir, kdcDirName), owner)
	if err != nil {
		return err
	}
	e.Kerberos = k
	fmt.Fprintf(os.Stderr, "kafkatest: Kerberos KDC of %s up in %.1fs on %s (dir %s)\n",
		k.Realm, time.Since(began).Seconds(), k.KDCAddr, k.Dir)
	return nil
}

// stopKDC stops the KDC of e.Kerberos, if there is one.
func (e *Env) stopKDC() error {
	if e.Kerberos == nil {
		return nil
	}
	return stopKerberos(e.kdcScript, e.Kerberos.Dir)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
