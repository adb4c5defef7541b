// Package reckey owns where a call's recording is kept, apart from the stores in
// shared/recordings, so that the call records (which check a worker's reported key
// against it, and delete the file a redacted call had) need no S3 client to know it.
package reckey

// For is the key of a call's recording: under its account, named by the call.
func For(accountID, callID string) string { return accountID + "/" + callID + ".ogg" }
