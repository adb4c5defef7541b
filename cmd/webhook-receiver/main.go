// Command webhook-receiver is a customer's webhook endpoint for trying Bridgeline
// locally, written as a customer writes one, with the Go SDK (sdk/go): it verifies every
// request with its webhook.Verify, reads the event into its typed struct with
// webhook.Parse, prints it, and answers call.incoming with -answer (accept, decline,
// assistant with -variables, or nothing: answer through the API).
//
//	BRIDGELINE_WEBHOOK_SECRET=whsec_... go run ./cmd/webhook-receiver -addr 127.0.0.1:9000 -answer accept
//	BRIDGELINE_WEBHOOK_SECRET=whsec_... go run ./cmd/webhook-receiver -answer assistant -variables caller_name=Ada
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/sdk/go/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	answer := flag.String("answer", "", `answer to call.incoming: "accept", "decline", "assistant" or "" (none)`)
	vars := flag.String("variables", "", `with -answer assistant: the call's variables, "name=value,name=value"`)
	flag.Parse()
	secrets := strings.Fields(strings.ReplaceAll(os.Getenv("BRIDGELINE_WEBHOOK_SECRET"), ",", " "))
	if len(secrets) == 0 {
		log.Fatal("webhook-receiver: set BRIDGELINE_WEBHOOK_SECRET to the endpoint's secret (two, comma-separated, while rotating)")
	}
	if *answer != "" && *answer != "accept" && *answer != "decline" && *answer != "assistant" {
		log.Fatal(`webhook-receiver: -answer must be "accept", "decline", "assistant" or ""`)
	}
	reply := bridgeline.CallAnswerRequest{Action: bridgeline.CallAnswerRequestAction(*answer)}
	if *vars != "" {
		if *answer != "assistant" {
			log.Fatal("webhook-receiver: -variables goes with -answer assistant")
		}
		reply.Variables = &bridgeline.Variables{}
		for _, kv := range strings.Split(*vars, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				log.Fatalf("webhook-receiver: -variables: %q is not name=value", kv)
			}
			(*reply.Variables)[k] = v
		}
	}
	replyBody, err := json.Marshal(reply)
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{} // webhook-ids processed: retries and redeliveries repeat them
	mux := http.NewServeMux()
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(r.Header, body, time.Now(), secrets...); err != nil {
			fmt.Printf("REJECTED %s: %v\n", r.Header.Get("webhook-id"), err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		ev, err := webhook.Parse(body)
		if err != nil {
			fmt.Printf("UNREADABLE %s: %v\n", r.Header.Get("webhook-id"), err)
			http.Error(w, "unreadable event", http.StatusBadRequest)
			return
		}
		dup := ""
		mu.Lock()
		if seen[ev.EventID()] {
			dup = " (again: already processed)"
		}
		seen[ev.EventID()] = true
		mu.Unlock()
		fmt.Printf("verified %s %s%s\n%s\n", ev.EventType(), ev.EventID(), dup, body)
		if in, ok := ev.(*bridgeline.CallIncomingEvent); ok && *answer != "" {
			fmt.Printf("answering %s from %s: %s\n", in.Data.CallId, in.Data.From, *answer)
			w.Header().Set("Content-Type", "application/json")
			w.Write(replyBody)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	fmt.Printf("webhook-receiver: listening on http://%s/\n", *addr)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
