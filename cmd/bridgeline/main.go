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
  bridgeline admin COMMAND [flags]            operator commands on the stack's store:
                                              account create, account limits, key create,
                                              key list, key revoke, line add, indexes backfill,
                                              events replay (bridgeline admin --help)
Settings come from the environment; see docs/configuration.md.`

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
