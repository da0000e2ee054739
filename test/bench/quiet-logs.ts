// Imported first by benchmarks whose tables the daemons' info lines would bury
// (loggers are made when their modules load).
process.env.AGENCY_LOG_LEVEL ??= 'warn'
