//go:build go1.23

package bridgeline_test

import (
	"context"
	"fmt"
	"log"
	"os"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
)

// On Go 1.23 and later, an Iter ranges: All yields each item, then a failed page's error.
func ExampleIter_All() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: "Margaret"}); err != nil {
		log.Fatal(err)
	}

	for a, err := range c.Assistants(ctx, &bridgeline.ListAssistantsParams{Limit: bridgeline.Ptr(10)}).All() {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("newest:", a.Name)
		break
	}
	// Output:
	// newest: Margaret
}
