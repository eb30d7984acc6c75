package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Config providers (KIP-297): `${provider:path:key}` in a value is replaced
// by what the provider declared in `config.providers` returns. Strait
// implements Kafka's three built-in providers; values resolved through any of
// them are secrets.

// Built-in config provider classes.
const (
	FileProviderClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	EnvProviderClass       = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	DirectoryProviderClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

// refPattern is ConfigTransformer.DEFAULT_PATTERN: ${provider:[path:]key}.
var refPattern = regexp.MustCompile(`\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}`)

type provider struct {
	name         string
	class        string
	allowedPaths []string       // allowed.paths (File and Directory providers, KIP-993)
	allowlist    *regexp.Regexp // allowlist.pattern (EnvVar provider, KIP-887)
	broken       bool           // declared wrongly; already reported
}

// resolver expands provider references for one Load.
type resolver struct {
	rep       *report
	opts      *LoadOptions
	providers map[string]*provider
	files     map[string]props // parsed ${file:...} files by path
}

// newResolver reads config.providers and the config.providers.<name>.*
// keys.
func newResolver(rep *report, opts *LoadOptions, raw props) *resolver {
	r := &resolver{rep: rep, opts: opts, providers: map[string]*provider{}, files: map[string]props{}}
	listE := raw["config.providers"]
	if listE != nil {
		for _, name := range parseList(listE.trimmed()) {
			if name == "" {
				rep.errorf(listE.origin(), "empty provider name in the list: remove the extra comma")
				continue
			}
			r.providers[name] = r.declare(raw, name, listE)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		e := raw[k]
		rest, ok := strings.CutPrefix(k, "config.providers.")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if _, ok := r.providers[name]; !ok {
			rep.warnf(e.origin(), "config provider %q is not listed in config.providers, so this key has no effect: add it to config.providers", name)
		}
	}
	return r
}

func (r *resolver) declare(raw props, name string, listE *entry) *provider {
	p := &provider{name: name}
	prefix := "config.providers." + name + "."
	ce := raw[prefix+"class"]
	if ce == nil {
		r.rep.errorf(listE.origin(), "config provider %q has no class: set %sclass = %s (or %s, %s)",
			name, prefix, FileProviderClass, EnvProviderClass, DirectoryProviderClass)
		p.broken = true
		return p
	}
	p.class = ce.trimmed()
	switch p.class {
	case FileProviderClass, EnvProviderClass, DirectoryProviderClass:
	default:
		r.rep.errorf(ce.origin(), "unknown config provider class %s: Strait supports only Kafka's built-in %s, %s and %s",
			ce.show(), FileProviderClass, EnvProviderClass, DirectoryProviderClass)
		p.broken = true
		return p
	}
	params := raw.stripped(prefix + "param.")
	for _, k := range slices.Sorted(maps.Keys(params)) {
		e := params[k]
		switch {
		case k == "allowed.paths" && p.class != EnvProviderClass:
			for _, a := range parseList(e.trimmed()) {
				if !filepath.IsAbs(a) {
					r.rep.errorf(e.origin(), "allowed path %q is not absolute: list absolute directories", a)
					p.broken = true
					continue
				}
				p.allowedPaths = append(p.allowedPaths, filepath.Clean(a))
			}
		case k == "allowlist.pattern" && p.class == EnvProviderClass:
			re, err := regexp.Compile("^(?:" + e.trimmed() + ")$")
			if err != nil {
				r.rep.errorf(e.origin(), "allowlist.pattern %s is not a valid regex: %v", e.show(), err)
				p.broken = true
				continue
			}
			p.allowlist = re
		default:
			r.rep.warnf(e.origin(), "%s does not take the parameter %q; it is ignored", p.class[strings.LastIndex(p.class, ".")+1:], k)
		}
	}
	return p
}

// resolve expands every reference in e.value in place. Keys under
// config.providers are left alone, as MM2 does.
func (r *resolver) resolve(e *entry) {
	if strings.HasPrefix(e.key, "config.providers") || !strings.Contains(e.value, "${") {
		return
	}
	matches := refPattern.FindAllStringSubmatchIndex(e.value, -1)
	if matches == nil {
		return
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(e.value[last:m[0]])
		last = m[1]
		ref := e.value[m[0]:m[1]]
		name := e.value[m[2]:m[3]]
		path, hasPath := "", m[4] >= 0
		if hasPath {
			path = e.value[m[4]:m[5]]
		}
		key := e.value[m[6]:m[7]]
		v, err := r.lookup(name, path, hasPath, key)
		if err != nil {
			if !errors.Is(err, errBrokenProvider) {
				r.rep.errorf(e.origin(), "cannot resolve %s: %v", ref, err)
			}
			b.WriteString(ref)
			continue
		}
		b.WriteString(v)
	}
	b.WriteString(e.value[last:])
	e.value = b.String()
	e.secret = true
}

var errBrokenProvider = errors.New("provider declared wrongly")

func (r *resolver) lookup(name, path string, hasPath bool, key string) (string, error) {
	p := r.providers[name]
	if p == nil {
		declared := slices.Sorted(maps.Keys(r.providers))
		if len(declared) == 0 {
			return "", fmt.Errorf("config provider %q is not declared: add config.providers = %s and config.providers.%s.class = <class>", name, name, name)
		}
		return "", fmt.Errorf("config provider %q is not declared in config.providers (declared: %s)", name, strings.Join(declared, ", "))
	}
	if p.broken {
		return "", errBrokenProvider
	}
	switch p.class {
	case EnvProviderClass:
		if path != "" {
			return "", fmt.Errorf("EnvVarConfigProvider takes no path: write ${%s:%s}", name, key)
		}
		if p.allowlist != nil && !p.allowlist.MatchString(key) {
			return "", fmt.Errorf("environment variable %q does not match config.providers.%s.param.allowlist.pattern", key, name)
		}
		v, ok := r.opts.Env(key)
		if !ok {
			return "", fmt.Errorf("environment variable %q is not set", key)
		}
		return v, nil
	case FileProviderClass:
		if !hasPath || path == "" {
			return "", fmt.Errorf("FileConfigProvider needs a file and a key, ${%s:/path/to/file.properties:key}; to use a whole file as the value, declare a DirectoryConfigProvider and write ${dir:/path/to/dir:file}", name)
		}
		if err := p.allowed(path); err != nil {
			return "", err
		}
		kv, err := r.propertiesFile(path)
		if err != nil {
			return "", err
		}
		e, ok := kv[key]
		if !ok {
			return "", fmt.Errorf("file %q has no key %q", path, key)
		}
		return e.value, nil
	default: // DirectoryProviderClass
		if !hasPath || path == "" {
			return "", fmt.Errorf("DirectoryConfigProvider needs a directory and a file name, ${%s:/path/to/dir:file}", name)
		}
		if err := p.allowed(path); err != nil {
			return "", err
		}
		if key == "" || strings.ContainsAny(key, `/\`) || key == "." || key == ".." {
			return "", fmt.Errorf("%q is not a file name in directory %q", key, path)
		}
		full := filepath.Join(path, key)
		data, err := r.opts.ReadFile(full)
		if err != nil {
			return "", readError(full, err)
		}
		return string(data), nil
	}
}

// allowed applies allowed.paths as Kafka's AllowedPaths does: the
// normalised path must lie in one of the allowed directories.
func (p *provider) allowed(path string) error {
	if p.allowedPaths == nil {
		return nil
	}
	clean := filepath.Clean(path)
	for _, a := range p.allowedPaths {
		if clean == a || strings.HasPrefix(clean, strings.TrimSuffix(a, string(filepath.Separator))+string(filepath.Separator)) {
			return nil
		}
	}
	return fmt.Errorf("path %q is outside config.providers.%s.param.allowed.paths (%s)", path, p.name, strings.Join(p.allowedPaths, ", "))
}

func (r *resolver) propertiesFile(path string) (props, error) {
	if kv, ok := r.files[path]; ok {
		return kv, nil
	}
	data, err := r.opts.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	var bad error
	kv, _ := fileEntries(data, func(line int, err error) {
		if bad == nil {
			bad = fmt.Errorf("file %q line %d: %v", path, line, err)
		}
	}, nil)
	if bad != nil {
		return nil, bad
	}
	r.files[path] = kv
	return kv, nil
}

func readError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file %q does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("file %q is not readable by this user", path)
	}
	return fmt.Errorf("reading file %q: %w", path, err)
}
