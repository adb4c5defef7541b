// Command event-relay is the Lambda on the events table's stream: each event a store
// transaction wrote (the outbox) is put on the EventBridge bus.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/relay"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

func main() {
	bus := os.Getenv("EVENT_BUS_NAME")
	eb, err := wire.EventBridge(context.Background())
	if err != nil || bus == "" {
		fmt.Fprintln(os.Stderr, "event-relay: EVENT_BUS_NAME and AWS configuration are required:", err)
		os.Exit(1)
	}
	r := relay.New(&awsbus.Publisher{Client: eb, BusName: bus}, dynamo.EventFromStream, wire.Logger().With("function", "event-relay"))
	lambda.Start(r.Handle)
}
