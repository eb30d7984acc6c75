package main

import (
	"bytes"
	"os"
	"testing"
)

func TestGeneratorRecords(t *testing.T) {
	tests := []struct {
		name          string
		size, keys    int
		partitions    int
		contiguous    int
		i             int64
		wantPartition int32
		wantKey       string
	}{
		{name: "keyed", size: 100, keys: 10, partitions: 4, i: 27, wantPartition: 3, wantKey: "key-7"},
		{name: "null keys round robin", size: 100, keys: 0, partitions: 4, i: 6, wantPartition: 2},
		{name: "small values", size: 16, keys: 1000, partitions: 8, i: 123456, wantPartition: 0, wantKey: "key-456"},
		{name: "contiguous runs", size: 100, partitions: 2000, contiguous: 50, i: 149, wantPartition: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGenerator(tt.size, tt.keys, tt.partitions)
			g.contiguous = tt.contiguous
			r := g.backlog("t", tt.i)
			if r.Partition != tt.wantPartition || string(r.Key) != tt.wantKey || len(r.Value) != tt.size {
				t.Errorf("backlog(%d) = partition %d key %q value %d B; want %d %q %d B", tt.i, r.Partition, r.Key, len(r.Value), tt.wantPartition, tt.wantKey, tt.size)
			}
			s := g.stamped("t", tt.i)
			if got := stampOf(s.Value); got != tt.i || len(s.Value) != tt.size || s.Partition != tt.wantPartition {
				t.Errorf("stamped(%d): stamp %d, value %d B, partition %d; want %d, %d B, %d", tt.i, got, len(s.Value), s.Partition, tt.i, tt.size, tt.wantPartition)
			}
			if !bytes.Equal(g.backlog("t", tt.i).Value, r.Value) {
				t.Error("backlog values differ between calls: the data must be deterministic")
			}
		})
	}
}

func TestStampOf(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{name: "stamped", in: "42|{\"id\":1}", want: 42},
		{name: "no separator", in: "probe", want: -1},
		{name: "not a number", in: "x|y", want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stampOf([]byte(tt.in)); got != tt.want {
				t.Errorf("stampOf(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestCovered(t *testing.T) {
	tests := []struct {
		name    string
		got     []int64
		want    []int64
		wantAll bool
		wantSum int64
	}{
		{name: "complete", got: []int64{5, 5}, want: []int64{5, 5}, wantAll: true, wantSum: 10},
		{name: "one behind", got: []int64{5, 4}, want: []int64{5, 5}, wantSum: 9},
		{name: "partition missing", got: []int64{5, -1}, want: []int64{5, 0}, wantSum: 5},
		{name: "duplicates count", got: []int64{6, 5}, want: []int64{5, 5}, wantAll: true, wantSum: 11},
		{name: "not yet listed", got: nil, want: []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, sum := covered(tt.got, tt.want)
			if all != tt.wantAll || sum != tt.wantSum {
				t.Errorf("covered(%v, %v) = %v, %d; want %v, %d", tt.got, tt.want, all, sum, tt.wantAll, tt.wantSum)
			}
		})
	}
}

func pidSelf(t *testing.T) int {
	t.Helper()
	return os.Getpid()
}
