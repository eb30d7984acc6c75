package kafkatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// javaSources are the Java programs tests run against the Kafka classpath, one public class
// per file, named after the file.
//
//go:embed java/*.java
var javaSources embed.FS

// javaBuilds holds one build per program and test bed script for the life of the test
// binary, so only the first test that runs a program pays for javac (about a second).
// It maps javaBuildKey to *javaBuild.
var javaBuilds sync.Map

const (
	javacTimeout = 2 * time.Minute
	// javaRelease is the oldest JVM the programs must run on: the one kafka.sh requires.
	javaRelease = "17"
	// javaInstallHint matches the one of scripts/kafka.sh, plus the compiler.
	javaInstallHint = "Debian/Ubuntu: apt-get install openjdk-17-jdk-headless"
)

type javaBuildKey struct{ script, name string }

type javaBuild struct {
	once sync.Once
	prog *JavaProgram
	err  error
}

// JavaProgram is one of the package's embedded Java programs, compiled against the Kafka
// jars of the test bed and ready to run. Env.JavaProgram returns it.
type JavaProgram struct {
	// Class is the program's main class; it names the program too.
	Class string
	// ClassPath holds the compiled program, then the Kafka jars.
	ClassPath string
	// LogConfig is the log4j config of the Kafka version (scripts/kafka.sh log4j-config).
	// Command points it at a file, so Kafka's client logs stay off the program's stdout.
	LogConfig string
}

// javaPrograms lists the names of the embedded Java programs.
func javaPrograms() []string {
	entries, err := fs.ReadDir(javaSources, "java")
	if err != nil {
		return nil // the embed pattern guarantees the dir
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".java"); ok {
			names = append(names, n)
		}
	}
	return names
}

// JavaProgram compiles the embedded Java program name (a file java/<name>.java) with javac against
// the Kafka classpath and returns how to run it. The classes are kept in the user's cache
// dir under a hash of the source and the classpath, and the build is done once per test
// binary: later calls, from any test, return the first result at once. It fails the test
// when there is no such program, javac is missing or the compile fails.
func (e *Env) JavaProgram(t testing.TB, name string) *JavaProgram {
	t.Helper()
	v, _ := javaBuilds.LoadOrStore(javaBuildKey{script: e.script, name: name}, &javaBuild{})
	b := v.(*javaBuild)
	b.once.Do(func() { b.prog, b.err = e.buildJava(name) })
	if b.err != nil {
		t.Fatalf("%v", b.err)
		return nil
	}
	return b.prog
}

// buildJava compiles program name, or finds it compiled by an earlier run.
func (e *Env) buildJava(name string) (*JavaProgram, error) {
	src, err := javaSources.ReadFile(path.Join("java", name+".java"))
	if err != nil {
		return nil, fmt.Errorf("no embedded Java program %q: the programs are %s", name, strings.Join(javaPrograms(), ", "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), javacTimeout)
	defer cancel()
	kafkaCP, logConfig, err := e.kafkaJava(ctx)
	if err != nil {
		return nil, fmt.Errorf("building Java program %s: %w", name, err)
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		return nil, fmt.Errorf("building Java program %s: javac not found in PATH: install a JDK 17+, not only a JRE (%s)", name, javaInstallHint)
	}
	root, err := javaCacheRoot()
	if err != nil {
		return nil, fmt.Errorf("building Java program %s: %w", name, err)
	}
	dir := filepath.Join(root, name+"-"+javaBuildHash(src, kafkaCP))
	if err := compileJava(ctx, javac, name, src, kafkaCP, dir); err != nil {
		return nil, err
	}
	return &JavaProgram{
		Class:     name,
		ClassPath: dir + string(os.PathListSeparator) + kafkaCP,
		LogConfig: logConfig,
	}, nil
}

// kafkaJava returns the Kafka classpath and log4j config that scripts/kafka.sh provides,
// fetching the jars first if needed.
func (e *Env) kafkaJava(ctx context.Context) (classPath, logConfig string, err error) {
	stdout, stderr, err := e.runScript(ctx, "classpath")
	if err != nil {
		return "", "", fmt.Errorf("getting the Kafka classpath from %s: %w\n%s", e.script, err, stderr)
	}
	classPath = strings.TrimSpace(stdout)
	stdout, stderr, err = e.runScript(ctx, "log4j-config")
	if err != nil {
		return "", "", fmt.Errorf("getting the Kafka log4j config from %s: %w\n%s", e.script, err, stderr)
	}
	return classPath, strings.TrimSpace(stdout), nil
}

// javaCacheRoot is where compiled programs are kept between runs.
func javaCacheRoot() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir() // no HOME: still works, just not shared between users' runs
	}
	root := filepath.Join(base, "strait", "java")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("creating the Java build cache %s: %w", root, err)
	}
	return root, nil
}

// javaBuildHash names a build after everything its classes depend on: the source and the
// jars it was compiled against (the classpath names the Kafka version).
func javaBuildHash(src []byte, classPath string) string {
	h := sha256.New()
	h.Write(src)
	h.Write([]byte{0})
	h.Write([]byte(classPath))
	h.Write([]byte{0})
	h.Write([]byte(javaRelease))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// compileJava compiles src into dir unless dir already holds the class. It compiles into a
// temporary dir next to dir and renames it into place, so a concurrent test binary (go
// test runs packages in parallel) never sees half a build and the first rename wins.
func compileJava(ctx context.Context, javac, name string, src []byte, classPath, dir string) error {
	class := filepath.Join(dir, name+".class")
	if _, err := os.Stat(class); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), name+".tmp-")
	if err != nil {
		return fmt.Errorf("building Java program %s: %w", name, err)
	}
	defer os.RemoveAll(tmp) // after a successful rename, only the source is left in it
	srcFile := filepath.Join(tmp, name+".java")
	if err := os.WriteFile(srcFile, src, 0o644); err != nil {
		return fmt.Errorf("building Java program %s: writing its source: %w", name, err)
	}
	classes := filepath.Join(tmp, "classes")
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, javac, "-encoding", "UTF-8", "--release", javaRelease, "-nowarn",
		"-d", classes, "-cp", classPath, srcFile)
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compiling Java program %s with %s against %s: %w\n%s", name, javac, classPath, err, out.String())
	}
	if err := os.Rename(classes, dir); err != nil {
		if _, statErr := os.Stat(class); statErr == nil {
			return nil // another test binary finished the same build first
		}
		return fmt.Errorf("building Java program %s: moving its classes into the cache %s: %w", name, dir, err)
	}
	return nil
}

// Command returns the command that runs the program with args: java with the program's
// classpath, JVM flags for a short-lived client and Kafka's logging sent to logFile
// (os.DevNull when empty). Set its Stdout and Stderr, then run it.
func (p *JavaProgram) Command(ctx context.Context, logFile string, args ...string) *exec.Cmd {
	if logFile == "" {
		logFile = os.DevNull
	}
	jvm := []string{
		// A probe runs for seconds: start fast rather than optimise.
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss1m", "-Xmx256m",
		"-Djava.awt.headless=true",
	}
	jvm = append(jvm, logOpts(p.LogConfig, logFile)...)
	jvm = append(jvm, "-cp", p.ClassPath, p.Class)
	return exec.CommandContext(ctx, "java", slices.Concat(jvm, args)...)
}

// logOpts are the JVM flags that make Kafka log with config to file, as scripts/kafka.sh
// does: log4j 2 (Kafka 4.x) reads an XML config, reload4j (3.x) a properties file.
func logOpts(config, file string) []string {
	if strings.HasSuffix(config, ".xml") {
		return []string{"-Dlog4j2.configurationFile=" + config, "-Dstrait.log.file=" + file}
	}
	return []string{"-Dlog4j.configuration=file:" + config, "-Dstrait.log.file=" + file}
}

// tailLines returns the last n lines of s (all of it when shorter), for failure messages.
func tailLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	s = strings.TrimRight(s, "\n")
	i := len(s)
	for range n {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

// readTail returns the last n lines of the file, or a note on why it could not be read.
func readTail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "(no log written)"
		}
		return fmt.Sprintf("(reading %s: %v)", file, err)
	}
	return tailLines(string(b), n)
}
