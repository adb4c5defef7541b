package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestAdminFlags: every admin command takes only its own flags, refuses a missing required
// one before touching the store, documents each flag in its --help and in the README, and
// prints JSON that ends with a newline; `line add` refuses a platform the deployment does
// not run and a handle its platform does not dial.
func TestAdminFlags(t *testing.T) {
	t.Setenv("BRIDGELINE_DATA", t.TempDir())
	t.Setenv("BRIDGELINE_STORE", "sqlite")
	ctx := context.Background()
	run := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := adminTo(ctx, args, &out)
		return out.String(), err
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range adminCommands {
		help, err := run(append(strings.Fields(c.name), "--help")...)
		if err != nil {
			t.Errorf("%s --help: %v", c.name, err)
		}
		if !strings.Contains(string(readme), "bridgeline admin "+c.name) {
			t.Errorf("README shows no `bridgeline admin %s`", c.name)
		}
		for _, f := range c.flags {
			if !strings.Contains(help, "-"+f+" ") && !strings.Contains(help, "-"+f+"\n") {
				t.Errorf("%s --help does not document --%s:\n%s", c.name, f, help)
			}
			if f != c.positional && !regexp.MustCompile(`bridgeline admin `+c.name+` [^\n]*--`+f+`\b`).Match(readme) {
				t.Errorf("README's `bridgeline admin %s` line does not show --%s", c.name, f)
			}
		}
	}
	list, err := run("--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range adminCommands {
		if !strings.Contains(list, c.name) {
			t.Errorf("admin --help does not list %s", c.name)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"key", "create"}, "--account is required"},
		{[]string{"key", "list"}, "--account is required"},
		{[]string{"key", "revoke", "--account", "acct_x"}, "--key is required"},
		{[]string{"account", "create"}, "--name is required"},
		{[]string{"account", "create", "--name", " "}, "--name is required"},
		{[]string{"account", "limits"}, "--account is required"},
		{[]string{"line", "add", "--account", "acct_x"}, "--handle is required"},
		{[]string{"key", "list", "--account", "acct_x", "--handle", "+15550100003"}, "flag provided but not defined: -handle"},
		{[]string{"account", "create", "--name", "A", "extra"}, `unexpected argument "extra"`},
		{[]string{"key", "bogus"}, `unknown command "key bogus"`},
		{[]string{"line", "add", "--account", "acct_x", "--handle", "+15550100003", "--platform", "twilio"},
			`--platform "twilio": this deployment runs no such calling platform (it runs: sim)`},
		{[]string{"line", "add", "--account", "acct_x", "--handle", "sales", "--platform", "sim"}, `--handle "sales" on the sim platform`},
		{[]string{"key", "create", "--account", "acct_nobody"}, `no account "acct_nobody"`},
		{[]string{"line", "add", "--account", "acct_nobody", "--handle", "+15550100003"}, `no account "acct_nobody"`},
	} {
		out, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("admin %s: %v; want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
		if out != "" {
			t.Errorf("admin %s printed %q on an error", strings.Join(tc.args, " "), out)
		}
	}

	var acct struct {
		AccountID string `json:"account_id"`
	}
	for _, args := range [][]string{
		{"account", "create", "--name", "Ops Co"},
		{"key", "create", "--account", "ACCT", "--live"},
		{"key", "list", "--account", "ACCT"},
		{"line", "add", "--account", "ACCT", "--handle", "+15550100003"},
		{"account", "limits", "ACCT"},
		{"indexes", "backfill"},
	} {
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "ACCT", acct.AccountID)
		}
		out, err := run(args...)
		if err != nil {
			t.Fatalf("admin %s: %v", strings.Join(args, " "), err)
		}
		if !strings.HasSuffix(out, "}\n") && !strings.HasSuffix(out, "]\n") {
			t.Errorf("admin %s: output %q does not end with a newline", strings.Join(args, " "), out)
		}
		if !json.Valid([]byte(out)) {
			t.Errorf("admin %s: not JSON: %q", strings.Join(args, " "), out)
		}
		if acct.AccountID == "" {
			json.Unmarshal([]byte(out), &acct)
		}
		if args[1] == "create" && args[0] == "key" && !strings.Contains(out, `"sk_live_`) {
			t.Errorf("key create --live made %s", out)
		}
	}
	// The refused line wrote nothing: the same handle is still free.
	if _, err := run("line", "add", "--account", acct.AccountID, "--handle", "+15550100004", "--name", "Sales"); err != nil {
		t.Errorf("line add after refusals: %v", err)
	}
}
