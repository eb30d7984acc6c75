// Package tlsconf builds the *tls.Config of a Kafka client from its Java
// ssl.* settings, read the way Apache Kafka's DefaultSslEngineFactory and the
// JDK read them, so that an mm2.properties that connects with MirrorMaker 2
// connects with Strait, and one that fails fails with a message that names
// the key, the cluster alias and the fix.
//
// Build collects every problem (config.Problem, joined with errors.Join) and
// every warning (config.Warning) in one pass. No message ever holds a
// password, key bytes, an inline certificate or a file's content; file paths
// and keystore aliases are named.
//
// # Stores
//
// Kafka's rules for which keys go together are kept, each refused
// combination being a Problem: ssl.keystore.key needs
// ssl.keystore.certificate.chain and ssl.keystore.type=PEM and excludes
// ssl.keystore.location and ssl.keystore.password; a PEM keystore file takes
// no ssl.keystore.password; a JKS or PKCS12 keystore needs its password; a
// password without a store is refused; ssl.truststore.certificates needs
// ssl.truststore.type=PEM and excludes ssl.truststore.location; a PEM
// truststore takes no password. Kafka compares the type "PEM" exactly, so
// "pem" is refused with a hint, while JKS and PKCS12 match in any case as the
// JDK's KeyStore.getInstance does. Other JDK store types (JCEKS, BCFKS,
// PKCS11) are refused: convert them to PKCS12 with keytool -importkeystore.
//
// A keystore or truststore file typed JKS or PKCS12 is read by its content,
// as the JDK does with keystore.type.compat=true (its default since JDK 8):
// the JKS magic 0xFEEDFEED means JKS, an ASN.1 SEQUENCE means PKCS12, so a
// PKCS12 file under ssl.keystore.type=JKS (Kafka's default type) works. A PEM
// file under a binary type, or a binary file under PEM, is a Problem that
// says which type to write.
//
// JKS: the key password is ssl.key.password, or the store password when it
// is unset (Kafka passes one password to the key manager). Java's default
// SunX509 key manager opens every key entry with that password when it
// starts, so every key entry must open with it here too. With several key
// entries Java's key manager picks one per handshake from the broker's
// accepted issuers; Strait takes the first private-key entry in alphabetical
// alias order (JKS aliases are lower case) and warns which one it chose. A
// JKS truststore may be read without a password: as in Java, its integrity
// is then not checked. Its trust anchors are its trusted-certificate entries
// and the first certificate of each key entry, as the JDK's trust manager
// takes them. keystore-go handles passwords as Latin-1, so a JKS key
// password with other characters is a Problem.
//
// PKCS12: the file has one password for the store and its key (keytool
// ignores -keypass for PKCS12), so an ssl.key.password that differs from
// ssl.keystore.password cannot open the key, in Java as here, and is a
// Problem. A PKCS12 keystore must hold exactly one key (go-pkcs12 reads no
// more). A PKCS12 truststore without ssl.truststore.password is read with the
// empty password (Java can only read unencrypted certificates then); its
// certificates must carry Java's trusted-certificate attribute, which Java
// requires too (openssl pkcs12 writes it only with -jdktrust).
//
// PEM: certificates and keys are found with Kafka's own PEM patterns, so
// the one-line values that properties continuation lines produce read as in
// Kafka, faults included: of several certificates on one line (lines
// continued with a bare backslash rather than \n\), Kafka's greedy pattern
// reads only the last. Strait does the same and says so: a Problem when
// that leaves a chain whose certificate is not the key's (MM2 fails too), a
// warning when it drops the rest of a chain or trusts only the last of
// several CAs. The key must be PKCS#8; it is read as encrypted PKCS#8
// exactly when ssl.key.password is set and as plain PKCS#8 otherwise, as
// Kafka does (early versions of Kafka's PEM support also required
// ssl.key.password for a PEM keystore file; current Kafka and Strait do
// not). A PKCS#1 or SEC1 key, an encrypted key without ssl.key.password and a plain
// key with ssl.key.password are each a Problem with the openssl command or
// setting that fixes them. Only PBES2 encryption is read (Java also reads the
// old PBES1 schemes; openssl pkcs8 -topk8 -v2 aes-256-cbc converts).
//
// Key types are those Go's TLS client signs with: RSA, ECDSA and Ed25519
// (Kafka's PEM reader takes RSA, DSA and EC; Go has no DSA).
//
// Empty values are read as Java reads them where Java can use them: an
// empty password is the empty password, not an unset one; an empty
// ssl.cipher.suites or ssl.enabled.protocols means the defaults; an empty
// ssl.endpoint.identification.algorithm turns host name checks off. An empty
// store location or inline PEM value is a Problem (Java fails on it too).
// Choice: an empty store type or ssl.protocol is taken as the default, and
// an empty value of a setting Go ignores is ignored, where Java would fail
// to find an algorithm named "".
//
// Beyond Java: the client's own certificate is checked against Options.Now
// (expired, or not yet valid) and against its private key when the config is
// built, where Java would fail the handshake later with a less clear error.
//
// # Verification
//
// Trust anchors are the truststore's certificates, or the system roots when
// no truststore is set (Java uses the JDK's cacerts). A truststore with no
// certificate is a Problem, as Java refuses an empty one.
//
// ssl.endpoint.identification.algorithm=https (the default, in any case as
// Java allows) is Go's verification with the broker's host name, which the
// dialer (franz-go) puts in ServerName. Unlike Java's HostnameChecker, Go
// does not fall back to the certificate's common name when it has no DNS
// subject alternative name: such broker certificates need reissuing. An
// empty value turns the host name check off: the chain is still verified
// against the trust anchors, by VerifyConnection (with InsecureSkipVerify
// only to skip Go's host name check), on full and resumed handshakes alike,
// and Build warns. Java's LDAPS algorithm, and any other, is a Problem.
//
// # Protocols and cipher suites
//
// ssl.protocol (default TLSv1.3) is the SSLContext protocol and caps the
// version, as Kafka documents ("if this config is set to TLSv1.2, clients
// will not use TLSv1.3"); TLS and SSL mean the JDK's generic context (up to
// TLSv1.3). It is matched in any case, as JCA names are.
// ssl.enabled.protocols (default TLSv1.2,TLSv1.3; empty = the JDK's default,
// the same) is matched exactly, as JSSE does. Go's client speaks TLSv1 to
// TLSv1.3 as one range from MinVersion to MaxVersion, so the enabled set
// under the cap must have no gap (TLSv1.1,TLSv1.3 is a Problem); SSLv3,
// SSLv2Hello and DTLS cannot be honoured. TLSv1 and TLSv1.1 are honoured with
// a warning: current JDKs disable them (jdk.tls.disabledAlgorithms), so MM2
// on such a JDK never used them.
//
// ssl.cipher.suites takes the IANA names Java uses, and Java's SSL_ aliases
// of the old suites; TLS_EMPTY_RENEGOTIATION_INFO_SCSV is accepted and
// dropped (Go always signals secure renegotiation). Suites Go lists as
// insecure are honoured with a warning; names Go does not have are a
// Problem. Go enables all three TLS 1.3 suites and cannot restrict them,
// which a list naming only some of them is warned about. As in JSSE, a
// protocol with no enabled suite is not offered: a list without TLS 1.3
// suites caps the version at TLS 1.2, and one with only TLS 1.3 suites raises
// the minimum to TLS 1.3. Go sends suites in its own preference order, not
// the list's.
//
// # Settings Go cannot use
//
// ssl.keymanager.algorithm (other than SunX509), ssl.trustmanager.algorithm
// (other than PKIX), ssl.provider and ssl.secure.random.implementation have
// no effect in Go and are warned about. ssl.engine.factory.class (other than
// Kafka's DefaultSslEngineFactory) is a Problem: custom Java classes cannot
// be loaded. Broker-side keys (ssl.client.auth, ssl.principal.mapping.rules)
// and any other unknown ssl.* key are warned about.
package tlsconf
