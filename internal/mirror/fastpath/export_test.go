package fastpath

// For the integration tests (package fastpath_test), which drive the fast
// path's internals against a real broker.
var FetchesOnlyWhatChanged = fetchesOnlyWhatChanged
