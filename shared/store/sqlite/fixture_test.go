package sqlite_test

import "github.com/bridgeline/bridgeline/shared/assistant"

func assistantFixture() assistant.Assistant {
	return assistant.Assistant{ID: "asst_kept", AccountID: "acct_1", Name: "Kept", Status: assistant.StatusActive, Revision: 1}
}
