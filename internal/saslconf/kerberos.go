package saslconf

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/twmb/franz-go/pkg/sasl/kerberos"
)

const defaultKrb5Conf = "/etc/krb5.conf"

// kerberos builds GSSAPI from Krb5LoginModule's options as a Java client
// uses them: a keytab login (useKeyTab=true keyTab=... principal=...) or
// the TGT of a ticket cache (useTicketCache=true, ticketCache or
// KRB5CCNAME). The service principal is <sasl.kerberos.service.name>/<broker
// host>, as in Java.
//
// With a keytab, one gokrb5 client logs in at the first authentication and
// renews its ticket itself (a goroutine of gokrb5 that Close ends). With a
// ticket cache, each authentication reads the cache again, so a ticket
// that kinit or a sidecar renews is picked up, as Java's relogin does.
func (b *builder) kerberos() *mechanism {
	service := b.serviceName()
	useKeyTab := b.optTrue("useKeyTab")
	useCache := b.optTrue("useTicketCache")
	keyTabPath, _ := b.opt("keyTab")
	principal, _ := b.opt("principal")
	cachePath, _ := b.opt("ticketCache")
	b.krb5Options(useCache && !useKeyTab)
	for _, k := range []string{"sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin"} {
		if _, p, ok := b.prop(k); ok {
			b.warn(p.Origin, "%s has no effect: Strait does not run kinit; its Kerberos client renews a keytab login itself and re-reads a ticket cache for every connection", k)
		}
	}
	if !useKeyTab && !useCache {
		b.problem(b.jaasOrigin(), `sasl.jaas.config: Krb5LoginModule needs useKeyTab=true keyTab="/path/client.keytab" principal="client@REALM", or useTicketCache=true (Strait cannot prompt for a password)`)
		return nil
	}
	if useKeyTab && useCache {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: useKeyTab and useTicketCache are both true: Strait logs in with the keytab and does not read the ticket cache (Java tries the cache first)")
	}
	if keyTabPath != "" && !useKeyTab {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: option keyTab has no effect without useKeyTab=true")
	}
	if cachePath != "" && !useCache {
		b.warn(b.jaasOrigin(), "sasl.jaas.config: option ticketCache has no effect without useTicketCache=true")
	}
	cfg := b.krb5Conf()
	if cfg == nil || service == "" {
		return nil
	}
	if useKeyTab {
		return b.keytabLogin(cfg, service, keyTabPath, principal)
	}
	return b.cacheLogin(cfg, service, cachePath, principal)
}

// serviceName is sasl.kerberos.service.name, or the JAAS option
// serviceName; Kafka refuses the two when they differ.
func (b *builder) serviceName() string {
	jv, jok := b.opt("serviceName")
	v, p, ok := b.prop("sasl.kerberos.service.name")
	switch {
	case ok && jok && v != jv:
		b.problem(p.Origin, "sasl.kerberos.service.name=%s and the JAAS option serviceName=%s differ; keep one", v, jv)
		return ""
	case ok && v != "":
		return v
	case jok && jv != "":
		return jv
	}
	o := b.anchor
	if ok {
		o = p.Origin
	}
	b.problem(o, "GSSAPI needs the Kerberos service name of the brokers: set %s.sasl.kerberos.service.name=kafka (or the name the brokers' principals use)", b.c.Cluster)
	return ""
}

// krb5Options warns about Krb5LoginModule options without effect.
func (b *builder) krb5Options(cache bool) {
	for _, o := range b.jaas.Options {
		if b.usedOpts[o.Key] {
			continue
		}
		v := o.Value.Reveal()
		switch o.Key {
		case "storeKey", "doNotPrompt":
			// Acceptor-side, and Strait never prompts: nothing to do.
		case "isInitiator":
			if !strings.EqualFold(v, "true") {
				b.warn(b.jaasOrigin(), "sasl.jaas.config: isInitiator=%s has no effect: a Kafka client is always the initiator", printable(v, 10))
			}
		case "renewTGT":
			if cache {
				b.warn(b.jaasOrigin(), "sasl.jaas.config: option renewTGT has no effect: Strait re-reads the ticket cache for each connection but does not renew its ticket; renew it with kinit -R or a sidecar")
			} else {
				b.warn(b.jaasOrigin(), "sasl.jaas.config: option renewTGT has no effect without useTicketCache; a keytab login renews itself")
			}
		case "debug", "refreshKrb5Config", "tryFirstPass", "useFirstPass", "storePass", "clearPass":
			b.warn(b.jaasOrigin(), "sasl.jaas.config: option %s of Krb5LoginModule has no effect in Strait", o.Key)
		default:
			continue
		}
		b.usedOpts[o.Key] = true
	}
}

// krb5Conf loads the Kerberos configuration from KRB5_CONFIG or
// /etc/krb5.conf (a JVM reads -Djava.security.krb5.conf, which Strait
// cannot see).
func (b *builder) krb5Conf() *krbconfig.Config {
	path := b.o.Getenv("KRB5_CONFIG")
	if path == "" {
		path = defaultKrb5Conf
	} else if first, _, more := strings.Cut(path, ":"); more {
		b.warn(b.jaasOrigin(), "KRB5_CONFIG lists several files; Strait reads only the first, %s", first)
		path = first
	}
	data, err := b.o.ReadFile(path)
	if err != nil {
		b.problem(b.jaasOrigin(), "GSSAPI: reading the Kerberos configuration %s: %v; Strait reads KRB5_CONFIG or %s (a JVM's -Djava.security.krb5.conf is not seen): set KRB5_CONFIG to your krb5.conf", path, fileErr(err), defaultKrb5Conf)
		return nil
	}
	cfg, err := krbconfig.NewFromString(string(data))
	var unsupported krbconfig.UnsupportedDirective
	if errors.As(err, &unsupported) {
		b.warn(b.jaasOrigin(), "GSSAPI: the Kerberos configuration %s has a directive Strait's Kerberos client does not support and ignores: %v", path, err)
		err = nil
	}
	if err != nil {
		b.problem(b.jaasOrigin(), "GSSAPI: the Kerberos configuration %s is not valid: %v; fix it or point KRB5_CONFIG at another", path, err)
		return nil
	}
	return cfg
}

// unmarshal calls a gokrb5 parser, which panics on some truncated input
// (v8.4.4 slices past the end of a short ticket cache).
func unmarshal(parse func([]byte) error, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("truncated or corrupt (%v)", r)
		}
	}()
	return parse(b)
}

// fileErr drops the path from a file error: the message names it already.
func fileErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// splitPrincipal splits "primary[/instance]@REALM"; realm is def when the
// principal has none.
func splitPrincipal(p, def string) (name, realm string) {
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, def
}

func (b *builder) keytabLogin(cfg *krbconfig.Config, service, path, principal string) *mechanism {
	if path == "" {
		b.problem(b.jaasOrigin(), `sasl.jaas.config: useKeyTab=true needs keyTab="/path/client.keytab"`)
		return nil
	}
	if principal == "" {
		b.problem(b.jaasOrigin(), `sasl.jaas.config: useKeyTab=true needs principal="client@REALM"`)
		return nil
	}
	name, realm := splitPrincipal(principal, cfg.LibDefaults.DefaultRealm)
	if name == "" || realm == "" {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: principal %q has no realm and krb5.conf sets no default_realm; write it as name@REALM", principal)
		return nil
	}
	data, err := b.o.ReadFile(path)
	if err != nil {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: reading keyTab %s: %v; check the path and that Strait may read it", path, fileErr(err))
		return nil
	}
	kt := keytab.New()
	if err := unmarshal(kt.Unmarshal, data); err != nil {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: keyTab %s is not a Kerberos keytab: %v", path, err)
		return nil
	}
	if !keytabHas(kt, name, realm) {
		b.problem(b.jaasOrigin(), "sasl.jaas.config: keyTab %s has no key for principal %s@%s; check principal or list the keytab with klist -k", path, name, realm)
		return nil
	}
	// Java does not use FAST pre-authentication; gokrb5 does unless told.
	cl := client.NewWithKeytab(name, realm, kt, cfg, client.DisablePAFXFAST(true))
	var mu sync.Mutex // one login at a time: each starts a renewal goroutine
	inner := kerberos.Kerberos(func(context.Context) (kerberos.Auth, error) {
		mu.Lock()
		defer mu.Unlock()
		if err := cl.AffirmLogin(); err != nil {
			return kerberos.Auth{}, fmt.Errorf("kerberos login of %s@%s with keyTab %s: %w; check the KDC in krb5.conf, the principal and the keytab", name, realm, path, err)
		}
		return kerberos.Auth{Client: cl, Service: service, PersistAfterAuth: true}, nil
	})
	return &mechanism{name: GSSAPI, cluster: b.c.Cluster, inner: inner, onClose: []func(){func() {
		mu.Lock()
		defer mu.Unlock()
		cl.Destroy()
	}}}
}

// keytabHas reports whether kt holds a key for name@realm.
func keytabHas(kt *keytab.Keytab, name, realm string) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == realm && strings.Join(e.Principal.Components, "/") == name {
			return true
		}
	}
	return false
}

func (b *builder) cacheLogin(cfg *krbconfig.Config, service, path, principal string) *mechanism {
	if path == "" {
		path = b.o.Getenv("KRB5CCNAME")
	}
	if typ, rest, ok := strings.Cut(path, ":"); ok && !strings.Contains(typ, "/") {
		if !strings.EqualFold(typ, "FILE") {
			b.problem(b.jaasOrigin(), "GSSAPI: the ticket cache %s is of type %s; Strait reads only FILE caches: point ticketCache or KRB5CCNAME at a file (kinit -c FILE:/path)", path, typ)
			return nil
		}
		path = rest
	}
	if path == "" {
		path = fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
	}
	load := func() (*credentials.CCache, error) {
		data, err := b.o.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the ticket cache %s: %v; run kinit, or set ticketCache or KRB5CCNAME", path, fileErr(err))
		}
		cc := new(credentials.CCache)
		if err := unmarshal(cc.Unmarshal, data); err != nil {
			return nil, fmt.Errorf("the ticket cache %s is not a Kerberos credentials cache: %v", path, err)
		}
		if principal != "" {
			name, realm := splitPrincipal(principal, cc.GetClientRealm())
			got := cc.GetClientPrincipalName().PrincipalNameString() + "@" + cc.GetClientRealm()
			if got != name+"@"+realm {
				return nil, fmt.Errorf("the ticket cache %s holds %s, not principal %s@%s", path, got, name, realm)
			}
		}
		return cc, nil
	}
	// Java logs in when the client starts, so a missing cache fails early.
	cc, err := load()
	if err != nil {
		b.problem(b.jaasOrigin(), "GSSAPI: %v", err)
		return nil
	}
	tgt, ok := cc.GetEntry(types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST, NameString: []string{"krbtgt", cc.GetClientRealm()}})
	switch {
	case !ok:
		b.problem(b.jaasOrigin(), "GSSAPI: the ticket cache %s holds no ticket-granting ticket for realm %s; run kinit", path, cc.GetClientRealm())
		return nil
	case !tgt.EndTime.After(b.o.Now()):
		b.warn(b.jaasOrigin(), "GSSAPI: the ticket in the ticket cache %s expired at %s; renew it (kinit) before Strait connects", path, tgt.EndTime.UTC().Format(time.RFC3339))
	}
	inner := kerberos.Kerberos(func(context.Context) (kerberos.Auth, error) {
		cc, err := load()
		if err != nil {
			return kerberos.Auth{}, err
		}
		cl, err := client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true))
		if err != nil {
			return kerberos.Auth{}, fmt.Errorf("the ticket cache %s: %w; run kinit again", path, err)
		}
		// Not persisted: franz-go destroys the client after the session.
		return kerberos.Auth{Client: cl, Service: service}, nil
	})
	return &mechanism{name: GSSAPI, cluster: b.c.Cluster, inner: inner}
}
