// Command session-sweeper is the scheduled Lambda that ends sessions past their maximum
// length and assistant calls no worker took (session.Service.Sweep), through the same
// conditional end as every other path, so call.ended is still emitted once.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() { wire.Start("session-sweeper", wire.Sweeper, lkwire.WithSIP) }
