package mirror

// For the integration tests (package mirror_test), which drive the fast
// path's internals against a real broker.
var FetchesOnlyWhatChanged = fetchesOnlyWhatChanged
