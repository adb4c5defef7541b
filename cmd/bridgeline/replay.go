package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/awsbus/replay"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// eventsReplay is `bridgeline admin events replay`: it empties one of the AWS event path's
// failure queues back into the path (replay.Replayer) and prints what it did. AWS
// configuration is the SDK's (credentials, region, AWS_ENDPOINT_URL).
func eventsReplay(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("admin events replay", flag.ContinueOnError)
	queue := fs.String("queue", "", "URL of the failure queue to replay (RelayFailureQueueURL, BusDeadLetterQueueURL or DeliveryDeadLetterQueueURL)")
	to := fs.String("to", os.Getenv("DELIVERY_QUEUE_URL"), "URL of the delivery queue (the stack's DeliveryQueueURL output; DELIVERY_QUEUE_URL)")
	bus := fs.String("bus", os.Getenv("EVENT_BUS_NAME"), "the event bus, for the relay's failures (the stack's EventBusName output; EVENT_BUS_NAME)")
	fs.SetOutput(io.Discard) // errors are returned; --help prints below
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(out, "usage: bridgeline admin events replay --queue URL [--to URL] [--bus NAME]")
		fs.SetOutput(out)
		fs.PrintDefaults()
		return nil
	} else if err != nil {
		return fmt.Errorf("admin events replay: %w (--help lists its flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("admin events replay: unexpected argument %q (--help lists its flags)", fs.Arg(0))
	}
	if *queue == "" || *to == "" {
		return errors.New("admin events replay: --queue and --to (or DELIVERY_QUEUE_URL) are required")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("aws config: %w", err)
	}
	r := &replay.Replayer{
		Queue:            sqs.NewFromConfig(cfg),
		Streams:          dynamodbstreams.NewFromConfig(cfg),
		Decode:           dynamo.EventFromStream,
		DeliveryQueueURL: *to,
		Logger:           slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if *bus != "" {
		r.Publisher = &awsbus.Publisher{Client: eventbridge.NewFromConfig(cfg), BusName: *bus}
	}
	rep, err := r.Replay(ctx, *queue)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if encErr := enc.Encode(rep); encErr != nil {
		return encErr
	}
	if err != nil {
		return err
	}
	if rep.Kept > 0 {
		return fmt.Errorf("admin events replay: %d message(s) left in the queue (see the log above)", rep.Kept)
	}
	return nil
}
