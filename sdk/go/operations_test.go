package bridgeline_test

import (
	"reflect"
	"strings"
	"testing"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
)

// TestEveryOperationHasATypedMethod: each operation of the generated client
// (Generated.XWithResponse) has its typed method, Client.X, answering an object and an
// error, so a customer never needs the generated client for an ordinary call.
func TestEveryOperationHasATypedMethod(t *testing.T) {
	gen := reflect.TypeOf(&bridgeline.ClientWithResponses{})
	typed := reflect.TypeOf(&bridgeline.Client{})
	errType := reflect.TypeOf((*error)(nil)).Elem()
	n := 0
	for i := 0; i < gen.NumMethod(); i++ {
		name := gen.Method(i).Name
		op, ok := strings.CutSuffix(name, "WithResponse")
		if !ok || strings.HasSuffix(op, "WithBody") {
			continue
		}
		n++
		m, ok := typed.MethodByName(op)
		if !ok {
			t.Errorf("Client has no %s for Generated.%s", op, name)
			continue
		}
		if m.Type.NumOut() != 2 || m.Type.Out(0).Kind() != reflect.Pointer || m.Type.Out(1) != errType {
			t.Errorf("Client.%s answers %v, want (*T, error)", op, m.Type)
		}
	}
	if n < 38 {
		t.Errorf("found %d operations, want the contract's 38 or more", n)
	}
}

func TestNewRefusesWhatCannotWork(t *testing.T) {
	for _, tc := range []struct{ url, key string }{
		{"", "sk_test_x"},
		{"127.0.0.1:8080", "sk_test_x"},
		{"ftp://127.0.0.1", "sk_test_x"},
		{"http://127.0.0.1:8080", ""},
		{"http://127.0.0.1:8080", "  "},
	} {
		if c, err := bridgeline.New(tc.url, tc.key, bridgeline.Options{}); err == nil {
			t.Errorf("New(%q, %q) = %v, want an error", tc.url, tc.key, c)
		}
	}
	if _, err := bridgeline.New("http://127.0.0.1:8080/", "sk_test_x", bridgeline.Options{}); err != nil {
		t.Errorf("New with a trailing slash: %v", err)
	}
}
