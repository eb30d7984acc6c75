package kafkatest

import (
	"regexp"
	"strings"
	"testing"
)

func TestNameParts(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name     string
		prefix   string
		testName string
		want     string
	}{
		{name: "plain", prefix: "orders-", testName: "TestMirror", want: "orders-TestMirror-0123abcd"},
		{name: "empty prefix", prefix: "", testName: "TestMirror", want: "TestMirror-0123abcd"},
		{name: "subtest", prefix: "g-", testName: "TestMirror/case_one", want: "g-TestMirror-case_one-0123abcd"},
		{name: "dots and others", prefix: "a.b ", testName: "TestX/ü#1.2", want: "a_b_TestX-__1_2-0123abcd"},
		{name: "long test name is cut", prefix: "p-", testName: long, want: "p-" + long[:189] + "-0123abcd"},
		{name: "long prefix is cut", prefix: long, testName: "TestX", want: long[:191] + "-0123abcd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := name(tc.prefix, tc.testName, "0123abcd")
			if got != tc.want {
				t.Errorf("name(%q, %q) = %q, want %q", tc.prefix, tc.testName, got, tc.want)
			}
			if len(got) > maxNameLen {
				t.Errorf("len = %d, want <= %d", len(got), maxNameLen)
			}
		})
	}
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,200}$`)

func TestName(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
	}{
		{name: "short", prefix: "topic-"},
		{name: "with space and ü", prefix: "grp."},
		{name: strings.Repeat("long", 80), prefix: strings.Repeat("p", 120)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := Name(t, tc.prefix), Name(t, tc.prefix)
			if a == b {
				t.Errorf("two calls gave the same name %q", a)
			}
			for _, n := range []string{a, b} {
				if !validName.MatchString(n) {
					t.Errorf("Name = %q, want only [a-zA-Z0-9_-] and at most 200 characters", n)
				}
			}
		})
	}
}
