package call

import (
	"encoding/json"
	"fmt"
)

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("call: marshal %T: %v", v, err))
	}
	return b
}
