// Command campaign-runner is the scheduled Lambda that runs campaigns
// (campaign.Runner): each invocation, once a minute, works every active campaign every
// two seconds for the minute: it settles attempts from the call records, dials due
// recipients as outbound assistant sessions through the same path as POST
// /v1/sessions, and completes campaigns with campaign.completed.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() { wire.Start("campaign-runner", wire.CampaignRunner, lkwire.WithSIP) }
