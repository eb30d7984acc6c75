package kafkaclient

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Logger adapts slog to franz-go's logger interface. franz-go's info level
// is chatty (every connection), so it is logged at debug level.
type Logger struct{ l *slog.Logger }

// NewLogger returns a franz-go logger writing to l.
func NewLogger(l *slog.Logger) *Logger { return &Logger{l: l} }

// Level implements kgo.Logger.
func (l *Logger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case l.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelDebug
	case l.l.Enabled(ctx, slog.LevelInfo):
		return kgo.LogLevelWarn
	case l.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	default:
		return kgo.LogLevelError
	}
}

// Log implements kgo.Logger.
func (l *Logger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var lvl slog.Level
	switch level {
	case kgo.LogLevelError:
		lvl = slog.LevelError
	case kgo.LogLevelWarn:
		lvl = slog.LevelWarn
	default:
		lvl = slog.LevelDebug
	}
	l.l.Log(context.Background(), lvl, msg, keyvals...)
}
