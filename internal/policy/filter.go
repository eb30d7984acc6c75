package policy

import (
	"errors"
	"fmt"
)

// Filter is MM2's DefaultTopicFilter and DefaultGroupFilter (spec §1.6): an include and an
// exclude regex list, each joined with "|" and matched against the whole name. A name is
// accepted when it matches include and not exclude. An empty list matches nothing, so an
// empty include list (topics=) accepts nothing and an empty exclude list excludes nothing.
// A nil *Filter accepts nothing.
type Filter struct {
	include, exclude *Pattern
}

// NewFilter compiles the include and exclude lists (e.g. topics and topics.exclude). The error
// reports every bad pattern of both lists, each as a *PatternError wrapped with "include" or
// "exclude"; callers that need the property key per list can call CompilePattern on each list
// themselves.
func NewFilter(include, exclude []string) (*Filter, error) {
	in, inErr := CompilePattern(include)
	if inErr != nil {
		inErr = fmt.Errorf("include list: %w", inErr)
	}
	ex, exErr := CompilePattern(exclude)
	if exErr != nil {
		exErr = fmt.Errorf("exclude list: %w", exErr)
	}
	if err := errors.Join(inErr, exErr); err != nil {
		return nil, err
	}
	return &Filter{include: in, exclude: ex}, nil
}

// Accepts reports whether name is selected: it matches the include list and not the exclude
// list.
func (f *Filter) Accepts(name string) bool {
	return f != nil && f.include.Matches(name) && !f.exclude.Matches(name)
}

// Include returns the compiled include list.
func (f *Filter) Include() *Pattern {
	if f == nil {
		return nil
	}
	return f.include
}

// Exclude returns the compiled exclude list.
func (f *Filter) Exclude() *Pattern {
	if f == nil {
		return nil
	}
	return f.exclude
}

// Values of use.defaults.from (KIP-894): which cluster's defaults a synced topic config gets.
const (
	// UseDefaultsFromTarget, the default, leaves source defaults out of created topics and resets
	// them to the target's own defaults on config sync.
	UseDefaultsFromTarget = "target"
	// UseDefaultsFromSource copies source default values as explicit target overrides.
	UseDefaultsFromSource = "source"
)

// ConfigFilter is MM2's DefaultConfigPropertyFilter (spec §4.4, §4.6): which topic config
// properties are synced (config.properties.exclude) and whether source defaults are copied
// (use.defaults.from). The read-only, sensitive and static-broker rules of §4.4 depend on
// config entry metadata and are applied by the caller.
type ConfigFilter struct {
	exclude        *Pattern
	sourceDefaults bool
}

// NewConfigFilter compiles config.properties.exclude (an empty list excludes nothing; pass
// DefaultConfigPropertiesExclude() for MM2's default) and checks use.defaults.from, which must
// be "source" or "target". Java accepts any value there and treats everything but "source" as
// "target"; Strait rejects other values because they are almost certainly mistakes.
func NewConfigFilter(exclude []string, useDefaultsFrom string) (*ConfigFilter, error) {
	var errs []error
	ex, err := CompilePattern(exclude)
	if err != nil {
		errs = append(errs, fmt.Errorf("config.properties.exclude: %w", err))
	}
	switch useDefaultsFrom {
	case UseDefaultsFromSource, UseDefaultsFromTarget:
	default:
		errs = append(errs, fmt.Errorf("use.defaults.from %q is not valid: set it to %q (the default) or %q, in lower case",
			useDefaultsFrom, UseDefaultsFromTarget, UseDefaultsFromSource))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &ConfigFilter{exclude: ex, sourceDefaults: useDefaultsFrom == UseDefaultsFromSource}, nil
}

// ShouldReplicateConfig reports whether the topic config property name is synced: it does not
// match config.properties.exclude.
func (f *ConfigFilter) ShouldReplicateConfig(name string) bool {
	return !f.exclude.Matches(name)
}

// ShouldReplicateSourceDefault reports whether source config entries that hold the broker
// default are copied to the target (use.defaults.from=source). When false they are left out of
// created topics and deleted (reset to the target default) on incremental config sync.
func (f *ConfigFilter) ShouldReplicateSourceDefault() bool {
	return f.sourceDefaults
}

// DefaultTopics returns MM2's default topics list (everything).
func DefaultTopics() []string { return []string{".*"} }

// DefaultTopicsExclude returns MM2's default topics.exclude list: internal-looking and replica
// topics.
func DefaultTopicsExclude() []string {
	return []string{`.*[\-\.]internal`, `.*\.replica`, `__.*`}
}

// DefaultGroups returns MM2's default groups list (everything).
func DefaultGroups() []string { return []string{".*"} }

// DefaultGroupsExclude returns MM2's default groups.exclude list: console consumers, Connect
// workers and internal groups.
func DefaultGroupsExclude() []string {
	return []string{`console-consumer-.*`, `connect-.*`, `__.*`}
}

// DefaultConfigPropertiesExclude returns MM2's default config.properties.exclude list: settings
// that are specific to a cluster or would break the target (throttles, timestamp rules,
// unclean election, min.insync.replicas).
func DefaultConfigPropertiesExclude() []string {
	return []string{
		`follower\.replication\.throttled\.replicas`,
		`leader\.replication\.throttled\.replicas`,
		`message\.timestamp\.difference\.max\.ms`,
		`message\.timestamp\.type`,
		`unclean\.leader\.election\.enable`,
		`min\.insync\.replicas`,
	}
}
