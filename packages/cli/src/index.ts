export { bootstrap } from './bootstrap.js';
export * from './credentials-file.js';
export { runBackup, runRestore, type BackupConfig, type BackupSummary } from './backup/backup-command.js';
