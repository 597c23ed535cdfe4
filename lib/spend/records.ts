import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileLines } from '../producer/usage/file-lines.js';
import type { RecordSource } from '../producer/usage/records.js';

/*
 * Where the agents keep one subagent's whole run on this machine (docs/spend.md, R6-4),
 * found by the key the host's row holds. A key is only ever looked up in an index built from the
 * folders' own listings, never joined into a path, so no stored value can name a file outside them.
 */

export type RecordKind = 'claude' | 'opencode' | 'codex';

/** The agents' folders; an absent one is not looked in. */
export interface RecordFolders {
  /** Claude Code's home (`~/.claude`): `projects/<project>/<session>/subagents/agent-<agentId>.jsonl` */
  claude?: string;
  /** OpenCode's data folder (`~/.local/share/opencode`): `storage/message/<sessionID>/*.json`, `storage/part/<messageID>/*.json` */
  opencode?: string;
  /** Codex's home (`~/.codex`): `sessions/YYYY/MM/DD/rollout-<time>-<threadId>.jsonl` */
  codex?: string;
}

/** One subagent's records: their kind and, as they come, their lines or documents. */
export interface FoundRecord {
  kind: RecordKind;
  records: () => RecordSource;
}

/** A folder's entries, or none when it cannot be listed (absent, not a folder, no permission). */
function entries(path: string): Dirent[] {
  try {
    return readdirSync(path, { withFileTypes: true });
  } catch {
    return [];
  }
}

const folders = (path: string) => entries(path).filter((e) => e.isDirectory());
const files = (path: string) => entries(path).filter((e) => e.isFile());

/** `agent-<agentId>.jsonl` in every session's `subagents/` folder: agentId → file. */
function claudeIndex(home: string): Map<string, string> {
  const index = new Map<string, string>();
  const projects = join(home, 'projects');
  for (const project of folders(projects))
    for (const session of folders(join(projects, project.name))) {
      const subagents = join(projects, project.name, session.name, 'subagents');
      for (const file of files(subagents)) {
        const id = /^agent-(.+)\.jsonl$/.exec(file.name)?.[1];
        if (id !== undefined && !index.has(id)) index.set(id, join(subagents, file.name));
      }
    }
  return index;
}

/** Codex names a rollout `rollout-<YYYY-MM-DDThh-mm-ss>-<thread id>.jsonl`: threadId → file. */
function codexIndex(home: string): Map<string, string> {
  const index = new Map<string, string>();
  const walk = (path: string, depth: number) => {
    for (const file of files(path)) {
      const id = /^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(.+)\.jsonl$/.exec(file.name)?.[1];
      if (id !== undefined && !index.has(id)) index.set(id, join(path, file.name));
    }
    if (depth > 0) for (const sub of folders(path)) walk(join(path, sub.name), depth - 1);
  };
  walk(join(home, 'sessions'), 3);
  return index;
}

/** OpenCode keeps a session's messages as one folder named by its id: sessionID → folder. */
function openCodeIndex(data: string): Map<string, string> {
  const messages = join(data, 'storage', 'message');
  return new Map(folders(messages).map((f) => [f.name, join(messages, f.name)]));
}

/**
 * A session's stored documents, one at a time: each message file, then each of its parts' files
 * (OpenCode's reader takes them in any order). A file that cannot be read comes as a document no
 * reader can parse, so it is counted as unreadable, never thrown.
 */
function* openCodeDocuments(data: string, sessionFolder: string): Generator<string> {
  for (const message of files(sessionFolder)) {
    yield readText(join(sessionFolder, message.name));
    const id = message.name.replace(/\.json$/, '');
    const parts = join(data, 'storage', 'part', id);
    for (const part of files(parts)) yield readText(join(parts, part.name));
  }
}

const UNREADABLE_FILE = '<a file that could not be read>';

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return UNREADABLE_FILE;
  }
}

/** Finds each row's records in the folders; each index is built once, on first use. */
export class RecordFinder {
  private claude?: Map<string, string>;
  private codex?: Map<string, string>;
  private openCode?: Map<string, string>;

  constructor(private readonly folders: RecordFolders) {}

  /** The kinds whose folder was given and exists: a key of another kind cannot be looked up here. */
  lookable(key: 'agent_id' | 'child_session_id'): boolean {
    if (key === 'agent_id') return this.folders.claude !== undefined && entries(this.folders.claude).length > 0;
    return [this.folders.opencode, this.folders.codex].some((f) => f !== undefined && entries(f).length > 0);
  }

  /** Claude Code's transcript of the subagent `agentId`. */
  byAgentId(agentId: string): FoundRecord | undefined {
    if (this.folders.claude === undefined) return undefined;
    this.claude ??= claudeIndex(this.folders.claude);
    const path = this.claude.get(agentId);
    return path === undefined ? undefined : { kind: 'claude', records: () => fileLines(path) };
  }

  /** The child session (OpenCode) or thread (Codex) `id`. */
  byChildSession(id: string): FoundRecord | undefined {
    const { opencode, codex } = this.folders;
    if (opencode !== undefined) {
      this.openCode ??= openCodeIndex(opencode);
      const folder = this.openCode.get(id);
      if (folder !== undefined) return { kind: 'opencode', records: () => openCodeDocuments(opencode, folder) };
    }
    if (codex !== undefined) {
      this.codex ??= codexIndex(codex);
      const path = this.codex.get(id);
      if (path !== undefined) return { kind: 'codex', records: () => fileLines(path) };
    }
    return undefined;
  }
}
