package deploy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/magiconair/properties"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"strait/internal/api"
	"strait/internal/checkpoint"
	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/kafkaclient"
)

const (
	manifestDir = "kubernetes"
	dockerfile  = "../Dockerfile"
	// shutdownDefault is strait run's --shutdown-timeout default.
	shutdownDefault = 30 * time.Second
)

// bundle is every object of deploy/kubernetes, decoded strictly.
type bundle struct {
	deployment *appsv1.Deployment
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	kustomize  kustomization
}

// kustomization is the part of kustomize's Kustomization the manifests use;
// decoded strictly, so a key outside it fails until it is added here.
type kustomization struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Resources  []string         `json:"resources"`
	Images     []kustomizeImage `json:"images"`
}

// kustomizeImage rewrites the image of containers whose image has Name.
type kustomizeImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag"`
}

// decodeStrict decodes one YAML document into obj and fails on unknown or
// duplicate fields, as kubectl apply --validate=strict does.
func decodeStrict(data []byte, obj any) error {
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == "---" {
			return errors.New("more than one document: keep one object per file")
		}
	}
	return yaml.UnmarshalStrict(data, obj)
}

// kinds maps each kind the manifests may hold to its apiVersion.
var kinds = map[string]string{
	"Deployment":          "apps/v1",
	"ConfigMap":           "v1",
	"Secret":              "v1",
	"Service":             "v1",
	"PodDisruptionBudget": "policy/v1",
}

func loadBundle(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{}
	data, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(data, &b.kustomize); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if b.kustomize.APIVersion != "kustomize.config.k8s.io/v1beta1" || b.kustomize.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml is %s %s, want kustomize.config.k8s.io/v1beta1 Kustomization", b.kustomize.APIVersion, b.kustomize.Kind)
	}
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" {
			want = append(want, name)
		}
	}
	if got := slices.Sorted(slices.Values(b.kustomize.Resources)); !slices.Equal(got, want) {
		t.Fatalf("kustomization.yaml lists %v, the directory holds %v: list every manifest once", got, want)
	}

	seen := map[string]string{}
	for _, name := range b.kustomize.Resources {
		data, err := os.ReadFile(filepath.Join(manifestDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantVersion, ok := kinds[tm.Kind]
		if !ok {
			t.Fatalf("%s: kind %q is not one this test decodes: add it to kinds and loadBundle", name, tm.Kind)
		}
		if tm.APIVersion != wantVersion {
			t.Fatalf("%s: %s has apiVersion %q, want %q", name, tm.Kind, tm.APIVersion, wantVersion)
		}
		if other, dup := seen[tm.Kind]; dup {
			t.Fatalf("%s: a second %s (the first is in %s)", name, tm.Kind, other)
		}
		seen[tm.Kind] = name
		var obj any
		switch tm.Kind {
		case "Deployment":
			b.deployment = &appsv1.Deployment{}
			obj = b.deployment
		case "ConfigMap":
			b.configMap = &corev1.ConfigMap{}
			obj = b.configMap
		case "Secret":
			b.secret = &corev1.Secret{}
			obj = b.secret
		case "Service":
			b.service = &corev1.Service{}
			obj = b.service
		case "PodDisruptionBudget":
			b.pdb = &policyv1.PodDisruptionBudget{}
			obj = b.pdb
		}
		if err := decodeStrict(data, obj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for kind := range kinds {
		if _, ok := seen[kind]; !ok {
			t.Fatalf("no %s among the manifests", kind)
		}
	}
	return b
}

// container is the Deployment's one container.
func (b *bundle) container(t *testing.T) *corev1.Container {
	t.Helper()
	cs := b.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(cs))
	}
	return &cs[0]
}

// apiPort is the container port named api.
func (b *bundle) apiPort(t *testing.T) corev1.ContainerPort {
	t.Helper()
	for _, p := range b.container(t).Ports {
		if p.Name == "api" {
			return p
		}
	}
	t.Fatal("the container has no port named api")
	return corev1.ContainerPort{}
}

// image is what the Dockerfile promises.
type image struct {
	user       string
	entrypoint []string
	cmd        []string
	expose     []string
	files      []string // COPY destinations
}

func readDockerfile(t *testing.T) image {
	t.Helper()
	data, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	var im image
	execForm := func(instr, rest string) []string {
		var v []string
		if err := json.Unmarshal([]byte(rest), &v); err != nil {
			t.Fatalf("Dockerfile %s %s: want the exec form, a JSON array: %v", instr, rest, err)
		}
		return v
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var logical string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || line == "" && logical == "" {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			logical += cont + " "
			continue
		}
		logical += line
		instr, rest, _ := strings.Cut(logical, " ")
		rest = strings.TrimSpace(rest)
		logical = ""
		switch strings.ToUpper(instr) {
		case "USER":
			im.user = rest
		case "ENTRYPOINT":
			im.entrypoint = execForm(instr, rest)
		case "CMD":
			im.cmd = execForm(instr, rest)
		case "EXPOSE":
			im.expose = append(im.expose, strings.Fields(rest)...)
		case "COPY":
			f := strings.Fields(rest)
			im.files = append(im.files, f[len(f)-1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return im
}

// runArgs is what the container's strait run line says.
type runArgs struct {
	config      string
	insecureAPI bool
	shutdown    time.Duration
}

// strait run's flags that take a value; the bool ones are in runBools.
var (
	runValued = []string{"-c", "--config", "--clusters", "--shutdown-timeout", "--log-level", "--log-format", "--debug-addr"}
	runBools  = []string{"--insecure-api", "--no-mm2-takeover"}
)

func parseRun(t *testing.T, args []string) runArgs {
	t.Helper()
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("the container runs %q, want strait run", args)
	}
	r := runArgs{shutdown: shutdownDefault}
	var positional []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case slices.Contains(runBools, name):
			r.insecureAPI = r.insecureAPI || name == "--insecure-api" && (!hasValue || value == "true")
			continue
		case !slices.Contains(runValued, name):
			t.Fatalf("parseRun does not know the flag %s of strait run: add it to runValued or runBools", name)
		}
		if !hasValue {
			i++
			if i == len(args) {
				t.Fatalf("%s has no value", name)
			}
			value = args[i]
		}
		switch name {
		case "-c", "--config":
			r.config = value
		case "--shutdown-timeout":
			d, err := time.ParseDuration(value)
			if err != nil {
				t.Fatalf("--shutdown-timeout %q: %v", value, err)
			}
			r.shutdown = d
		}
	}
	if r.config == "" && len(positional) > 0 {
		r.config = positional[0]
	}
	if r.config == "" {
		t.Fatalf("strait run %q names no config file", args)
	}
	return r
}

// run is the container's strait run line: its args, or the image's CMD
// when the manifest leaves them to the image.
func (b *bundle) run(t *testing.T) runArgs {
	t.Helper()
	c := b.container(t)
	im := readDockerfile(t)
	if len(c.Command) > 0 && !slices.Equal(c.Command, im.entrypoint) {
		t.Fatalf("the container's command %q replaces the image's entrypoint %q", c.Command, im.entrypoint)
	}
	args := c.Args
	if len(args) == 0 {
		args = im.cmd
	}
	return parseRun(t, args)
}

// podFile is a file the container sees, and where it comes from.
type podFile struct {
	data   []byte
	mode   fs.FileMode
	source string // "secret" or "configMap" (the manifests' objects), or "image"
	key    string // the key of the Secret or ConfigMap
}

// podFiles lays out the container's file system from its volume mounts and
// the Dockerfile's COPY lines, as the kubelet and the image would.
func (b *bundle) podFiles(t *testing.T) map[string]podFile {
	t.Helper()
	files := map[string]podFile{}
	for _, f := range readDockerfile(t).files {
		files[f] = podFile{source: "image", mode: 0o644}
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range b.deployment.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range b.container(t).VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("volume mount %s names no volume", m.Name)
		}
		var (
			source string
			data   map[string][]byte
			items  []corev1.KeyToPath
			mode   int32 = 0o644 // the kubelet's default
		)
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != b.configMap.Name {
				t.Fatalf("volume %s mounts ConfigMap %q; the manifests' is %q", v.Name, v.ConfigMap.Name, b.configMap.Name)
			}
			source, items = "configMap", v.ConfigMap.Items
			data = map[string][]byte{}
			for k, s := range b.configMap.Data {
				data[k] = []byte(s)
			}
			if v.ConfigMap.DefaultMode != nil {
				mode = *v.ConfigMap.DefaultMode
			}
		case v.Secret != nil:
			if v.Secret.SecretName != b.secret.Name {
				t.Fatalf("volume %s mounts Secret %q; the manifests' is %q", v.Name, v.Secret.SecretName, b.secret.Name)
			}
			source, items = "secret", v.Secret.Items
			data = secretData(b.secret)
			if v.Secret.DefaultMode != nil {
				mode = *v.Secret.DefaultMode
			}
		default:
			t.Fatalf("volume %s is of a type podFiles does not lay out: teach it", v.Name)
		}
		// Without items every key is a file named after it.
		paths := map[string]podFile{}
		if items == nil {
			for k, d := range data {
				paths[k] = podFile{data: d, mode: fs.FileMode(mode), source: source, key: k}
			}
		}
		for _, it := range items {
			d, ok := data[it.Key]
			if !ok {
				t.Fatalf("volume %s projects key %q, which its %s lacks", v.Name, it.Key, source)
			}
			m := mode
			if it.Mode != nil {
				m = *it.Mode
			}
			paths[it.Path] = podFile{data: d, mode: fs.FileMode(m), source: source, key: it.Key}
		}
		if m.SubPath != "" {
			f, ok := paths[m.SubPath]
			if !ok {
				t.Fatalf("volume mount %s takes subPath %q, which volume %s does not hold", m.Name, m.SubPath, v.Name)
			}
			files[m.MountPath] = f
			continue
		}
		for p, f := range paths {
			files[path.Join(m.MountPath, p)] = f
		}
	}
	return files
}

// secretData merges data and stringData, as the API server does.
func secretData(s *corev1.Secret) map[string][]byte {
	d := map[string][]byte{}
	for k, v := range s.Data {
		d[k] = v
	}
	for k, v := range s.StringData {
		d[k] = []byte(v)
	}
	return d
}

// mountOf returns the mount path of the volume that projects source.
func (b *bundle) mountOf(t *testing.T, source string) string {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range b.deployment.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range b.container(t).VolumeMounts {
		v := volumes[m.Name]
		if source == "secret" && v.Secret != nil || source == "configMap" && v.ConfigMap != nil {
			return m.MountPath
		}
	}
	t.Fatalf("no volume mount of the %s", source)
	return ""
}

// mm2Properties is the ConfigMap's configuration file.
func (b *bundle) mm2Properties(t *testing.T) string {
	t.Helper()
	s, ok := b.configMap.Data["mm2.properties"]
	if !ok {
		t.Fatalf("ConfigMap %s has no mm2.properties", b.configMap.Name)
	}
	return s
}

func TestManifestsDecodeStrictly(t *testing.T) {
	b := loadBundle(t)
	if b.deployment.Spec.Template.Spec.Containers == nil {
		t.Fatal("the Deployment decoded with no containers")
	}

	// The decoder must refuse a misspelt field: a probe or a security
	// setting under a wrong name would otherwise be dropped without a word.
	data, err := os.ReadFile(filepath.Join(manifestDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(data), "readinessProbe:", "readinesProbe:", 1)
	if typo == string(data) {
		t.Fatal("deployment.yaml has no readinessProbe to misspell")
	}
	err = decodeStrict([]byte(typo), &appsv1.Deployment{})
	if err == nil || !strings.Contains(err.Error(), "readinesProbe") {
		t.Fatalf("decoding a Deployment with readinesProbe: err = %v, want an unknown-field error naming it", err)
	}
}

func TestDeploymentSharesTheFlows(t *testing.T) {
	b := loadBundle(t)
	d := b.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas = %s, want at least 2: the nodes share each flow, and one keeps it copying while another restarts", show(d.Spec.Replicas))
	}
	if ru := d.Spec.Strategy.RollingUpdate; d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("strategy %+v, want a rolling update with maxUnavailable 0: the new node joins the flows' groups before an old one leaves", d.Spec.Strategy)
	}
	labels := d.Spec.Template.Labels
	selects := func(what string, sel map[string]string) {
		if len(sel) == 0 {
			t.Errorf("%s selects nothing", what)
		}
		for k, v := range sel {
			if labels[k] != v {
				t.Errorf("%s selects %s=%s, which the pod template (%v) lacks", what, k, v, labels)
			}
		}
	}
	if d.Spec.Selector == nil {
		t.Fatal("the Deployment has no selector")
	}
	selects("the Deployment", d.Spec.Selector.MatchLabels)
	selects("the Service", b.service.Spec.Selector)
	if b.pdb.Spec.Selector == nil {
		t.Fatal("the PodDisruptionBudget has no selector")
	}
	selects("the PodDisruptionBudget", b.pdb.Spec.Selector.MatchLabels)
	if (b.pdb.Spec.MinAvailable == nil) == (b.pdb.Spec.MaxUnavailable == nil) {
		t.Error("the PodDisruptionBudget must set exactly one of minAvailable and maxUnavailable")
	}

	c := b.container(t)
	if c.Image == "" {
		t.Error("the container has no image")
	}
	name, _, _ := strings.Cut(c.Image, ":")
	if !slices.ContainsFunc(b.kustomize.Images, func(i kustomizeImage) bool { return i.Name == name }) {
		t.Errorf("kustomization.yaml's images do not name the container's image %q, so kustomize would not rewrite it", name)
	}

	r := b.run(t)
	grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil || time.Duration(*grace)*time.Second <= r.shutdown {
		t.Errorf("terminationGracePeriodSeconds = %s, want more than --shutdown-timeout %v, or the kubelet kills Strait before it commits its progress", show(grace), r.shutdown)
	}

	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[res]
		limit, hasLimit := c.Resources.Limits[res]
		if !hasReq || !hasLimit {
			t.Errorf("resources: %s needs a request and a limit (request %v, limit %v)", res, hasReq, hasLimit)
			continue
		}
		if req.Cmp(limit) > 0 {
			t.Errorf("resources: %s request %s is above its limit %s", res, req.String(), limit.String())
		}
	}
	// Strait's soft memory limit for one flow with the default buffer.memory
	// (internal/cli/memlimit.go) must fit well below the container's.
	if limit := c.Resources.Limits[corev1.ResourceMemory]; limit.Cmp(resource.MustParse("320Mi")) < 0 {
		t.Errorf("memory limit %s is below twice Strait's 160 MiB soft limit for one flow", limit.String())
	}
}

// show prints an optional field.
func show[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func TestSecurityContextIsNonRoot(t *testing.T) {
	b := loadBundle(t)
	spec := b.deployment.Spec.Template.Spec
	c := b.container(t)
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("the container has no securityContext")
	}

	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = pod.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		t.Error("runAsNonRoot is not true")
	}
	uid := sc.RunAsUser
	if uid == nil {
		uid = pod.RunAsUser
	}
	im := readDockerfile(t)
	imageUID, _, _ := strings.Cut(im.user, ":")
	switch {
	case uid != nil && *uid == 0:
		t.Error("runAsUser is 0 (root)")
	case uid != nil && fmt.Sprint(*uid) != imageUID:
		t.Errorf("runAsUser %d differs from the image's USER %q", *uid, im.user)
	case uid == nil && (imageUID == "" || imageUID == "0"):
		t.Errorf("no runAsUser and the image's USER is %q", im.user)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("the container is privileged")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken is not false: Strait never calls the Kubernetes API")
	}
}

// refPattern is Kafka's ConfigTransformer pattern: ${provider:[path:]key}.
var refPattern = regexp.MustCompile(`\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}`)

func TestConfigIsWhereTheConfigMapIsMounted(t *testing.T) {
	b := loadBundle(t)
	files := b.podFiles(t)
	r := b.run(t)
	f, ok := files[r.config]
	if !ok {
		t.Fatalf("strait run reads %s, and nothing is mounted there", r.config)
	}
	if f.source != "configMap" || f.key != "mm2.properties" {
		t.Fatalf("%s is the %s's %q, want the ConfigMap's mm2.properties", r.config, f.source, f.key)
	}

	// The image run without arguments reads the same file, and the
	// container keeps the image's entrypoint, the static binary.
	im := readDockerfile(t)
	if !slices.Equal(im.entrypoint, []string{"/strait"}) || !slices.Contains(im.files, "/strait") {
		t.Errorf("the image's entrypoint is %q (files %q), want [/strait] copied in", im.entrypoint, im.files)
	}
	if got := parseRun(t, im.cmd).config; got != r.config {
		t.Errorf("the image's CMD reads %s, the Deployment %s", got, r.config)
	}
}

func TestSecretReferencesAreSecretKeys(t *testing.T) {
	b := loadBundle(t)
	files := b.podFiles(t)
	text := b.mm2Properties(t)
	secretDir := b.mountOf(t, "secret")

	// References in values only: Kafka, like Strait, reads none in comments.
	kv, err := (&properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}).LoadBytes([]byte(text))
	if err != nil {
		t.Fatalf("mm2.properties: %v", err)
	}
	var refs [][]string
	for _, k := range kv.Keys() {
		v, _ := kv.Get(k)
		refs = append(refs, refPattern.FindAllStringSubmatch(v, -1)...)
	}
	if len(refs) == 0 {
		t.Fatal("mm2.properties reads nothing from the Secret")
	}
	fromSecret := func(ref, p string) podFile {
		f, ok := files[p]
		if !ok || f.source != "secret" {
			t.Errorf("%s: %s is not a key of Secret %s mounted at %s (the Secret has %v)", ref, p, b.secret.Name, secretDir, slices.Sorted(maps.Keys(secretData(b.secret))))
		}
		return f
	}
	for _, m := range refs {
		ref, provider, p, key := m[0], m[1], m[2], m[3]
		switch provider {
		case "file":
			f := fromSecret(ref, p)
			if f.data == nil {
				continue
			}
			kv, err := (&properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}).LoadBytes(f.data)
			if err != nil {
				t.Errorf("%s: Secret key %s is not a properties file: %v", ref, f.key, err)
				continue
			}
			if _, ok := kv.Get(key); !ok {
				t.Errorf("%s: Secret key %s has no key %q (it has %v)", ref, f.key, key, kv.Keys())
			}
		case "directory":
			fromSecret(ref, path.Join(p, key))
		case "env":
			c := b.container(t)
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == key }) {
				t.Errorf("%s: the container sets no environment variable %s", ref, key)
			}
		default:
			t.Errorf("%s: provider %q is none of Kafka's file, directory and env", ref, provider)
		}
	}

	// Every file the configuration names must be in the pod, and a secret
	// never sits in the ConfigMap itself.
	for _, k := range kv.Keys() {
		v, _ := kv.Get(k)
		if (strings.HasSuffix(k, ".location") || strings.HasSuffix(k, ".file")) && strings.HasPrefix(v, "/") {
			if _, ok := files[v]; !ok {
				t.Errorf("%s = %s: no such file in the pod", k, v)
			}
		}
		secretKey := strings.HasSuffix(k, ".password") || strings.HasSuffix(k, "sasl.jaas.config") || strings.HasSuffix(k, ".token") || strings.HasSuffix(k, ".secret")
		if secretKey && !strings.Contains(v, "${") {
			t.Errorf("%s is written in the ConfigMap: read it from the Secret with ${file:...} or ${directory:...}", k)
		}
	}

	// The pod's user must be able to read the Secret's files.
	pod := b.deployment.Spec.Template.Spec.SecurityContext
	for p, f := range files {
		if f.source != "secret" {
			continue
		}
		groupReadable := pod != nil && pod.FSGroup != nil && f.mode&0o040 != 0
		if !groupReadable && f.mode&0o004 == 0 {
			t.Errorf("%s has mode %#o and the pod no fsGroup that could read it: the non-root user cannot read it", p, f.mode)
		}
	}
}

// podRoot writes the pod's files under a temporary directory and returns it
// with LoadOptions that see that directory as /.
func podRoot(t *testing.T, files map[string]podFile) (string, config.LoadOptions) {
	t.Helper()
	root := t.TempDir()
	for p, f := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Strait runs with the working directory / (the image sets no WORKDIR).
	in := func(p string) string { return filepath.Join(root, filepath.FromSlash(path.Clean("/"+p))) }
	return root, config.LoadOptions{
		Env:      func(string) (string, bool) { return "", false },
		ReadFile: func(p string) ([]byte, error) { return os.ReadFile(in(p)) },
		Stat:     func(p string) (fs.FileInfo, error) { return os.Stat(in(p)) },
	}
}

// TestConfigLoadsInStrait runs the example through Strait's own loader and
// client plan (strait check --offline), with the Secret's files where the
// pod has them, then serves Strait's API with the settings it resolved and
// probes it as the kubelet would.
func TestConfigLoadsInStrait(t *testing.T) {
	b := loadBundle(t)
	files := b.podFiles(t)
	r := b.run(t)
	root, opts := podRoot(t, files)

	cfg, err := config.Load(r.config, opts)
	if err != nil {
		t.Fatalf("Strait refuses the ConfigMap's mm2.properties: %v", err)
	}
	for _, w := range cfg.Warnings {
		t.Errorf("warning: %s", w.String())
	}
	plan, err := kafkaclient.NewPlan(cfg)
	if err != nil {
		t.Fatalf("Strait cannot build its clients from the ConfigMap's mm2.properties: %v", err)
	}
	for _, w := range plan.Warnings {
		t.Errorf("client warning: %s", w.String())
	}

	var enabled []string
	for _, f := range cfg.EnabledFlows() {
		enabled = append(enabled, f.Name())
	}
	if !slices.Equal(enabled, []string{"A->B"}) {
		t.Errorf("enabled flows %v, want [A->B]", enabled)
	}
	// Each cluster logs in with the Secret's password.
	creds, err := properties.LoadString(string(secretData(b.secret)["credentials.properties"]))
	if err != nil {
		t.Fatalf("the Secret's credentials.properties: %v", err)
	}
	for alias, key := range map[string]string{"A": "a.password", "B": "b.password"} {
		cl := cfg.Cluster[alias]
		if cl == nil {
			t.Fatalf("no cluster %s", alias)
		}
		if cl.SecurityProtocol != "SASL_SSL" {
			t.Errorf("cluster %s: security.protocol %s, want SASL_SSL", alias, cl.SecurityProtocol)
		}
		jaas, _ := cl.Consumer.Get("sasl.jaas.config")
		if want := creds.GetString(key, "<none>"); !strings.Contains(jaas, `password="`+want+`"`) {
			t.Errorf("cluster %s: the JAAS line does not carry the Secret's %s", alias, key)
		}
	}

	// The API: reachable from the kubelet, and accepted by Strait's own
	// rule for a non-loopback address.
	node := cfg.Node
	host, port, err := net.SplitHostPort(node.APIListen)
	if err != nil {
		t.Fatalf("strait.api.listen %q: %v", node.APIListen, err)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		t.Errorf("strait.api.listen %s: the probes and the Service reach only an address on every interface (0.0.0.0:8083)", node.APIListen)
	}
	apiPort := b.apiPort(t)
	if port != fmt.Sprint(apiPort.ContainerPort) {
		t.Errorf("strait.api.listen port %s, the container's api port %d", port, apiPort.ContainerPort)
	}
	if err := api.CheckSecurity(node.APIListen, node.APIToken.Reveal(), node.APITLSCertFile, node.APITLSKeyFile, r.insecureAPI); err != nil {
		t.Fatalf("Strait would not start its API: %v", err)
	}
	if got, want := node.APIToken.Reveal(), string(secretData(b.secret)["api-token"]); got != want {
		t.Errorf("strait.api.token is not the Secret's api-token")
	}
	if node.APITLSCertFile == "" {
		t.Fatal("the example serves no TLS: set strait.api.tls.cert.file and key.file")
	}

	// The Secret's certificate and key are placeholders, not PEM: the test
	// puts a throwaway pair where the pod has them, and starts the API as
	// strait run does.
	writeCertificate(t, filepath.Join(root, node.APITLSCertFile), filepath.Join(root, node.APITLSKeyFile))
	srv, err := api.Listen(api.Options{
		Listen: "127.0.0.1:0", Token: node.APIToken.Reveal(),
		CertFile: filepath.Join(root, node.APITLSCertFile), KeyFile: filepath.Join(root, node.APITLSKeyFile),
		Insecure: r.insecureAPI, Node: idleNode{}, Config: cfg,
	})
	if err != nil {
		t.Fatalf("starting the API with the example's settings: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	base := srv.URL()

	c := b.container(t)
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
		codes []int // what the endpoint answers for a node with no flow yet
	}{
		{"liveness", c.LivenessProbe, "/healthz", []int{http.StatusOK}},
		{"readiness", c.ReadinessProbe, "/readyz", []int{http.StatusServiceUnavailable}},
	} {
		t.Run(p.name, func(t *testing.T) {
			if p.probe == nil || p.probe.HTTPGet == nil {
				t.Fatalf("no HTTP %s probe", p.name)
			}
			g := p.probe.HTTPGet
			if g.Path != p.path {
				t.Errorf("the %s probe asks %s, want %s", p.name, g.Path, p.path)
			}
			if g.Port != intstr.FromString("api") && g.Port != intstr.FromInt32(apiPort.ContainerPort) {
				t.Errorf("the %s probe asks port %s, not the container's api port", p.name, g.Port.String())
			}
			if want := corev1.URISchemeHTTPS; g.Scheme != want {
				t.Errorf("the %s probe's scheme is %q, want %s: the API serves TLS", p.name, g.Scheme, want)
			}
			// The kubelet sends no token and does not verify the certificate.
			code, body := get(t, strings.Replace(base, "https", strings.ToLower(string(g.Scheme)), 1)+g.Path, "")
			if !slices.Contains(p.codes, code) {
				t.Errorf("GET %s without a token: %d %s, want %v", g.Path, code, body, p.codes)
			}
		})
	}
	// Everything else asks for the token from the Secret.
	if code, _ := get(t, base+"/api/v1/config", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/config without a token: %d, want 401", code)
	}
	if code, body := get(t, base+"/api/v1/config", node.APIToken.Reveal()); code != http.StatusOK {
		t.Errorf("GET /api/v1/config with the Secret's token: %d %s, want 200", code, body)
	}

	svc := b.service.Spec.Ports
	if len(svc) != 1 || svc[0].Name != "api" || svc[0].Port != apiPort.ContainerPort ||
		(svc[0].TargetPort != intstr.FromString("api") && svc[0].TargetPort != intstr.FromInt32(apiPort.ContainerPort)) {
		t.Errorf("the Service's ports %+v, want one named api, port %d, to the container's api port", svc, apiPort.ContainerPort)
	}
}

// idleNode is a node that runs no flow yet.
type idleNode struct{}

func (idleNode) Status() daemon.Status { return daemon.Status{} }
func (idleNode) Groups(context.Context, string, string) ([]checkpoint.GroupState, error) {
	return nil, daemon.ErrNoFlow
}
func (idleNode) Translate(context.Context, string, string) ([]checkpoint.Translation, error) {
	return nil, daemon.ErrNoFlow
}
func (idleNode) TranslateOffset(context.Context, string, string, int32, int64) (checkpoint.Translation, error) {
	return checkpoint.Translation{}, daemon.ErrNoFlow
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // as the kubelet's probes
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// writeCertificate writes a self-signed ECDSA certificate and its key as PEM.
func writeCertificate(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "strait"},
		DNSNames:     []string{"strait"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
}
