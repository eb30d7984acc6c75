// Package policy holds MirrorMaker 2's naming and selection rules, reproduced exactly so that
// Strait names remote topics, skips internal topics, breaks replication cycles and filters
// topics, groups and topic configs the way a Java MM2 deployment does (spec mm2-compat.md §1.6,
// §3, §4.4, §4.6, §5, §6.3). Everything here is pure: no I/O, no goroutines, no globals, and
// every value is immutable once built, so it is safe for concurrent use.
//
// # Replication policies
//
// New builds DefaultReplicationPolicy ("<alias><sep><topic>") or IdentityReplicationPolicy
// (names unchanged, except topics whose name ends in "heartbeats"). Java's null results are
// reported as (value, false). BuiltinClass maps the third-party identity policies whose names
// Strait reproduces (Strimzi's, AWS's) to IdentityClass.
//
// # Rename rules
//
// ParseRules reads Strait's strait.rename.rules (exact NAME=NEW-NAME and re:REGEX=REPLACEMENT
// rules, first match wins), which replace the custom Java policies MM2 users write. Renaming
// applies them before a fallback policy built by New and inverts them, so that cycle
// detection and checkpoints read renamed names back, also those that flows into the source
// made. Every rule must be reversible; RemoteNames reports, per topic, the collisions that
// only the topics that exist show.
//
// # Regular expressions
//
// MM2's topics, topics.exclude, groups, groups.exclude and config.properties.exclude are Java
// regexes. Strait compiles them with Go's regexp (RE2), after joining the list with "|" and
// anchoring it for a full match, as MM2 does (CompilePattern). Constructs that RE2 cannot run
// are rejected with an error naming the pattern and the construct, and so are the constructs
// Go accepts but reads differently from Java:
//
//   - lookahead and lookbehind (?= (?! (?<= (?<!, atomic groups (?>, possessive quantifiers
//     *+ ++ ?+ {n}+, backreferences \1..\9 and \k<name> (RE2 has none of them; Go would even
//     read \12 as an octal escape);
//   - \v (Java: any vertical whitespace; Go: vertical tab only), the (?U) flag (Java: Unicode
//     character classes; Go: ungreedy), a class nested in a class such as [a[b]] or
//     [[:alpha:]] (Java: union; Go: literal '[' or POSIX class), class intersection &&
//     (Java: intersection; Go: two literal '&'), \0 with three octal digits (Java reads
//     three, Go two) and \0 alone (an error in Java, NUL in Go);
//   - Java escapes Go lacks, with a hint for each: \h \H \V \Z \R \X \G \e \cX \uhhhh \N{..}.
//
// Accepted, with these documented differences that cannot affect Kafka topic names (which
// only contain ASCII letters, digits, '.', '_' and '-') but could affect group ids:
//
//   - '.' excludes only \n in Go; Java also excludes \r, \u0085, \u2028 and \u2029;
//   - '$' inside a pattern is end of text in Go; Java also matches before a final line
//     terminator;
//   - \s in Go omits the vertical tab \x0B that Java's \s includes;
//   - (?i) folds case over all of Unicode in Go (so k matches the Kelvin sign); Java folds
//     ASCII only unless (?u) is given (which Go rejects);
//   - Go accepts some syntax Java rejects or spells differently (a literal '{' as in a{,
//     script classes written \p{Greek} where Java writes \p{IsGreek}, (?P<name>...)); such
//     patterns would make Java MM2 fail at start-up.
//
// Go errors that Java habits cause (Java property classes such as \p{Lower} or \p{IsLatin},
// the x, u and d flags) carry a hint.
package policy
