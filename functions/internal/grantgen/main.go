// Command grantgen writes each function's DynamoDB grants into template.yaml from
// functions/internal/wire (Tables, Writes): one IAM statement per table with exactly the
// actions wire.Actions gives, on the table and its indexes, in place of SAM's
// DynamoDBCrudPolicy and DynamoDBReadPolicy (which grant Scan, and DeleteItem with any
// write). Run it from the repository's root after changing either map:
//
//	go run ./functions/internal/grantgen
//
// functions/template_test.go fails when template.yaml differs from what it writes.
package main

import (
	"fmt"
	"os"

	"github.com/bridgeline/bridgeline/functions/internal/grantgen/grants"
)

func main() {
	path := "template.yaml"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grantgen:", err)
		os.Exit(1)
	}
	out, err := grants.Rewrite(string(b))
	if err != nil {
		fmt.Fprintln(os.Stderr, "grantgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "grantgen:", err)
		os.Exit(1)
	}
}
