// Agent definition files (SPEC §2.1): front matter of <engine dir>/agents/<name>.md and skills
// at <engine dir>/skills/<name>/SKILL.md. Reads a repository checkout on disk.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { parseYaml } from './parse.js';
import { type ManifestIssue, plainMessages, toManifestIssues } from './issues.js';
import { enumOf, isRecord, positiveInt } from './rules.js';

export const DEFAULT_ENGINE_DIR = '.svc/engine';

/** An issue in a file next to the manifest; `file` is relative to the repository directory. */
export interface AgentFileIssue extends ManifestIssue { file: string }

const PERMISSION = ['ask', 'allow', 'deny'] as const;
const TOOL_PERMISSION_KEYS = ['todowrite', 'question', 'webfetch', 'websearch', 'doom_loop'];
const permissionValue = () => enumOf(PERMISSION);
const COLOR_WORDS = ['primary', 'secondary', 'accent', 'success', 'warning', 'error', 'info'];

export const agentFrontMatterSchema = z.looseObject({
  description: z.string().optional(),
  model: z.string().optional(),
  mode: enumOf(['primary', 'subagent', 'all']).optional(),
  variant: z.string().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  steps: positiveInt().optional(),
  color: z
    .string()
    .refine((c) => /^#[0-9a-fA-F]{6}$/.test(c) || COLOR_WORDS.includes(c), {
      error: `must be # and 6 hex digits, or one of ${COLOR_WORDS.join(', ')}`,
    })
    .optional(),
  hidden: z.boolean({ error: 'must be true or false' }).optional(),
  disable: z.boolean({ error: 'must be true or false' }).optional(),
  options: z.record(z.string(), z.unknown()).optional(),
  permission: z
    .union([
      permissionValue(),
      z.record(z.string(), z.union([permissionValue(), z.record(z.string(), permissionValue())], {
        error: `must be one of ${PERMISSION.join(', ')}, or a mapping of patterns to one of them`,
      })),
    ], { error: `must be one of ${PERMISSION.join(', ')}, or a mapping of tools to permissions` })
    .superRefine((p, ctx) => {
      if (!isRecord(p)) return;
      for (const key of TOOL_PERMISSION_KEYS) {
        if (p[key] !== undefined && typeof p[key] !== 'string') {
          ctx.addIssue({ code: 'custom', path: [key], message: `must be one of ${PERMISSION.join(', ')}` });
        }
      }
    })
    .optional(),
});

/** The engine directory a manifest document names (engine.config_dir), else the default. */
export function engineDirOf(document: unknown): string {
  const engine = isRecord(document) ? document.engine : undefined;
  const dir = isRecord(engine) ? engine.config_dir : undefined;
  return typeof dir === 'string' && dir !== '' && !dir.startsWith('/') && !dir.split(/[\\/]/).includes('..') ? dir : DEFAULT_ENGINE_DIR;
}

/** Front matter of an agent file: the YAML between a leading `---` line and the next `---` line. */
export function checkAgentFrontMatter(text: string): ManifestIssue[] {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return [];
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === '---');
  if (end < 0) return [{ path: '', message: 'the front matter starting at line 1 has no closing --- line' }];
  const parsed = parseYaml(lines.slice(1, end).join('\n'));
  if (!parsed.ok) {
    // Line numbers of the front matter start after the opening --- line.
    return [{ path: '', message: parsed.issue.message.replace(/at line (\d+)/, (_, n) => `at line ${Number(n) + 1}`) }];
  }
  if (parsed.document === null || parsed.document === undefined) return [];
  const result = agentFrontMatterSchema.safeParse(parsed.document, { error: plainMessages });
  return result.success ? [] : toManifestIssues(result.error.issues);
}

function entries(dir: string): { name: string; isDirectory: boolean }[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, isDirectory: e.isDirectory() }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return [];
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Skill names that version 2 agents list (`skills: [..]`), with the agent that lists each (once each). */
function listedSkills(document: unknown): { agent: string; skill: string }[] {
  const agents = isRecord(document) && isRecord(document.agents) ? document.agents : {};
  return Object.entries(agents).flatMap(([agent, value]) =>
    isRecord(value) && Array.isArray(value.skills)
      ? [...new Set(value.skills.filter((s): s is string => typeof s === 'string' && s !== ''))].map((skill) => ({ agent, skill }))
      : []);
}

/**
 * Validates the agent definition files and skills of the repository at `repoDir`, for the
 * manifest `document` (its engine.config_dir and the skills its agents list).
 */
export function checkAgentFiles(repoDir: string, document: unknown): AgentFileIssue[] {
  const engineDir = engineDirOf(document);
  const issues: AgentFileIssue[] = [];
  const agentsDir = path.posix.join(engineDir, 'agents');
  for (const entry of entries(path.join(repoDir, agentsDir))) {
    if (entry.isDirectory || !entry.name.endsWith('.md')) continue;
    const file = path.posix.join(agentsDir, entry.name);
    let text: string;
    try {
      text = readFileSync(path.join(repoDir, file), 'utf8');
    } catch (err) {
      issues.push({ file, path: '', message: `cannot be read: ${(err as Error).message}` });
      continue;
    }
    for (const issue of checkAgentFrontMatter(text)) issues.push({ file, ...issue });
  }
  const skillsDir = path.posix.join(engineDir, 'skills');
  for (const entry of entries(path.join(repoDir, skillsDir))) {
    if (!entry.isDirectory) continue;
    const file = path.posix.join(skillsDir, entry.name, 'SKILL.md');
    if (!isFile(path.join(repoDir, file))) issues.push({ file, path: '', message: `is missing: a skill directory needs a SKILL.md file` });
  }
  for (const { agent, skill } of listedSkills(document)) {
    const dir = path.posix.join(skillsDir, skill);
    const file = path.posix.join(dir, 'SKILL.md');
    if (!entries(path.join(repoDir, skillsDir)).some((e) => e.isDirectory && e.name === skill)) {
      issues.push({ file, path: '', message: `is missing: agent ${agent} lists the skill ${skill}` });
    }
  }
  return issues;
}
