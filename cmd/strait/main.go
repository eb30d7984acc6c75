// Command strait is a Kafka cross-cluster replicator, a drop-in replacement
// for Apache Kafka MirrorMaker 2.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"strait/internal/cli"
)

func main() {
	// Replication allocates few, large buffers: a tighter GC target keeps
	// peak memory low for little CPU. GOGC in the environment still wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal skips the graceful shutdown.
		<-ctx.Done()
		stop()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		fmt.Fprintln(os.Stderr, "strait: second signal, exiting without waiting for in-flight records")
		os.Exit(130)
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
