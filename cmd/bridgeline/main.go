// Command bridgeline runs Bridgeline's local stack (`bridgeline dev`) and the operator's
// commands (`bridgeline admin ...`).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage:
  bridgeline dev [--store sqlite|dynamodb]    run the local stack in the foreground
  bridgeline admin account create --name N    create an account; prints {"account_id", "api_key"}
  bridgeline admin account limits A [--max-concurrent-sessions N|default]
                                              show or set the account's own limit of live sessions
  bridgeline admin key create --account A     add an API key to an account; prints it once
  bridgeline admin key list --account A       the account's keys (ids, prefixes, last four; never the key)
  bridgeline admin key revoke --account A --key K  revoke a key (refused for the account's last key)
  bridgeline admin line add --account A --handle H [--platform sim] [--name N]
                                              provision a line
  bridgeline admin events replay --queue URL [--to URL] [--bus NAME]
                                              put an AWS failure queue's events back on the
                                              event path (docs/deploy.md)
Settings come from the environment; see README.md.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bridgeline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return fmt.Errorf("no command")
	}
	switch args[0] {
	case "dev":
		return dev(ctx, args[1:])
	case "admin":
		return admin(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Println(usage)
		return nil
	}
	fmt.Fprintln(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
