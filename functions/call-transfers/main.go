// Command call-transfers is the Lambda on the transfer queue: calls-transfer and
// persona-transfer record a transfer pending, answer 202 and queue it, and this function
// runs it (LiveKit's TransferSIPParticipant, a SIP REFER that waits up to 40 s for the
// destination, longer than API Gateway lets a request run) and records the outcome in
// the call (session.Service.RunTransfer); a failure of a call an assistant handles is
// told in the call's room, for the assistant to tell the caller.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() { wire.Start("call-transfers", wire.Transfers, lkwire.WithSIP) }
