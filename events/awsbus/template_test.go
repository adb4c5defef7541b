package awsbus_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/events/awsbus"
)

// deliveryTemplate is what template.yaml declares for event delivery, read so the moto
// test builds the same bus, rule and queues.
type deliveryTemplate struct {
	RulePattern        string // JSON
	VisibilityTimeout  string
	RetentionPeriod    string
	MaxReceiveCount    string
	DLQRetentionPeriod string
}

// readDeliveryTemplate reads the delivery resources from the repository's template.yaml.
// CloudFormation tags (!Ref, !GetAtt, !Sub) are left as they are: only plain values are read.
func readDeliveryTemplate(t *testing.T) deliveryTemplate {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatalf("read template.yaml: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse template.yaml: %v", err)
	}
	resources := child(doc.Content[0], "Resources")
	if resources == nil {
		t.Fatal("template.yaml has no Resources")
	}
	var rule, queue, dlq *yaml.Node
	for i := 0; i+1 < len(resources.Content); i += 2 {
		res := resources.Content[i+1]
		props := child(res, "Properties")
		switch scalar(child(res, "Type")) {
		case "AWS::Events::Rule":
			if targets := child(props, "Targets"); targets != nil && len(targets.Content) > 0 {
				rule = props
			}
		case "AWS::SQS::Queue":
			// The delivery queue has the redrive policy; its dead-letter queue is the one
			// it names (the bus's and the relay's failure queues are other queues).
			switch {
			case child(props, "RedrivePolicy") != nil:
				queue = props
			case resources.Content[i].Value == "DeliveryDeadLetterQueue":
				dlq = props
			}
		}
	}
	if rule == nil || queue == nil || dlq == nil {
		t.Fatalf("template.yaml lacks the delivery rule, queue or dead-letter queue (rule %v queue %v dlq %v)", rule != nil, queue != nil, dlq != nil)
	}
	var pattern any
	if err := child(rule, "EventPattern").Decode(&pattern); err != nil {
		t.Fatalf("EventPattern: %v", err)
	}
	pj, _ := json.Marshal(pattern)
	return deliveryTemplate{
		RulePattern:        string(pj),
		VisibilityTimeout:  scalar(child(queue, "VisibilityTimeout")),
		RetentionPeriod:    scalar(child(queue, "MessageRetentionPeriod")),
		MaxReceiveCount:    scalar(child(child(queue, "RedrivePolicy"), "maxReceiveCount")),
		DLQRetentionPeriod: scalar(child(dlq, "MessageRetentionPeriod")),
	}
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// The rule template.yaml declares matches what Publisher puts, and nothing else.
func TestTemplateRuleMatchesPublisher(t *testing.T) {
	tpl := readDeliveryTemplate(t)
	var got, want any
	json.Unmarshal([]byte(tpl.RulePattern), &got)
	json.Unmarshal([]byte(awsbus.RulePattern), &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("template.yaml rule pattern = %s, want %s (awsbus.RulePattern)", tpl.RulePattern, awsbus.RulePattern)
	}
	if n, err := strconv.Atoi(tpl.MaxReceiveCount); err != nil || n < 1 {
		t.Errorf("delivery queue maxReceiveCount = %q, want a positive number", tpl.MaxReceiveCount)
	}
	if v, err := strconv.Atoi(tpl.VisibilityTimeout); err != nil || v < 60 {
		t.Errorf("delivery queue VisibilityTimeout = %q, want at least the function's 60 s", tpl.VisibilityTimeout)
	}
}
