package wire

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/session"
)

// An API transfer waits for the destination to answer (session.TransferTimeout, 40 s),
// longer than API Gateway lets calls-transfer run (30 s). On AWS calls-transfer records
// the transfer pending, answers 202 and puts the job on the transfer queue
// (TRANSFER_QUEUE_URL); the call-transfers function reads it and runs the transfer
// (session.Service.RunTransfer), which records the outcome in the call.

// SQSTransfers is the transfer queue: a session.TransferQueue on SQS.
type SQSTransfers struct {
	Client   *sqs.Client
	QueueURL string
}

// EnqueueTransfer sends the job as one message.
func (q *SQSTransfers) EnqueueTransfer(ctx context.Context, job session.TransferJob) error {
	body, err := json.Marshal(job)
	if err != nil {
		return err
	}
	_, err = q.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.QueueURL), MessageBody: aws.String(string(body))})
	return err
}

// transferQueueFromEnv is the transfer queue TRANSFER_QUEUE_URL names (calls-transfer's),
// or nil.
func transferQueueFromEnv(ctx context.Context) (session.TransferQueue, error) {
	url := os.Getenv("TRANSFER_QUEUE_URL")
	if url == "" {
		return nil, nil
	}
	c, err := SQS(ctx)
	if err != nil {
		return nil, err
	}
	return &SQSTransfers{Client: c, QueueURL: url}, nil
}

// Transfers is the call-transfers function's handler: each message of the transfer queue
// is one job, run to its outcome. A job whose outcome is recorded (completed or failed,
// whatever it was) is done; one whose record could not be read or written is reported
// failed, and the queue delivers it again (RunTransfer does nothing for a transfer no
// longer pending). A malformed message is logged and dropped: no delivery would mend it.
func Transfers(ctx context.Context, lk LiveKit) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	cp, err := New(ctx, "call-transfers", lk)
	if err != nil {
		return nil, err
	}
	log := Logger().With("function", "call-transfers")
	return transferHandler(cp, log), nil
}

func transferHandler(cp *controlplane.ControlPlane, log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			var job session.TransferJob
			if err := json.Unmarshal([]byte(m.Body), &job); err != nil || job.CallID == "" || job.RequestedAt.IsZero() {
				log.Error("malformed transfer job dropped", "message_id", m.MessageId, "err", err)
				continue
			}
			err := cp.Sessions.RunTransfer(ctx, job)
			var outcome *apierr.Error
			switch {
			case err == nil:
				log.Info("transfer completed", "call_id", job.CallID)
			case errors.As(err, &outcome):
				log.Warn("transfer failed", "call_id", job.CallID, "err", err)
			default:
				log.Error("transfer not run; the queue delivers it again", "call_id", job.CallID, "err", err)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	}
}
