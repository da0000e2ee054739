// The scripted agent's knowledge of an example project, read from the shared
// repository's .sim/ folder: the tasks it adds when it holds `plan`, and for
// each task the approaches it can take, in the order it would try them, and
// how long an attempt takes. An approach is either one file,
// recipes/<task>/<approach>.mjs, written to the task's `file` (calc), or a
// directory, recipes/<task>/<approach>/, whose files are written at the same
// paths in the workspace (strkit).
import { existsSync } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative } from 'node:path'

export interface TaskRecipe {
  id: string
  title?: string
  description?: string
  deps?: string[]
  scope?: string[]
  priority?: number
  /** where a single-file approach is written */
  file?: string
  approaches: string[]
  /** modelled work time of one attempt, before workScale; unset: a fraction of a second */
  workSeconds?: number
}

export interface RecipeFile {
  path: string
  content: Buffer
  mode: number
}

export interface Recipes {
  tasks: Map<string, TaskRecipe>
  /** the tasks in project order: what the holder of `plan` puts on the board */
  plan: TaskRecipe[]
  /** multiplies every workSeconds (the experiment runner sets it to run faster or slower) */
  workScale: number
  /** the files an approach writes */
  files: (task: string, approach: string) => Promise<RecipeFile[]>
}

export async function loadRecipes(workspace: string): Promise<Recipes> {
  const root = join(workspace, '.sim')
  const project = JSON.parse(await readFile(join(root, 'project.json'), 'utf8')) as { tasks: TaskRecipe[]; workScale?: number }
  const tasks = new Map(project.tasks.map(t => [t.id, t]))
  return {
    tasks,
    plan: project.tasks,
    workScale: typeof project.workScale === 'number' && project.workScale >= 0 ? project.workScale : 1,
    files: async (task, approach) => {
      const dir = join(root, 'recipes', task, approach)
      if (existsSync(dir) && (await stat(dir)).isDirectory()) {
        const out: RecipeFile[] = []
        for (const file of await walk(dir))
          out.push({ path: relative(dir, file), content: await readFile(file), mode: (await stat(file)).mode & 0o777 })
        return out
      }
      const target = tasks.get(task)?.file
      if (target == null) throw new Error(`recipe ${task}/${approach} is neither a directory nor a file approach with a target file`)
      return [{ path: target, content: await readFile(`${dir}.mjs`), mode: 0o644 }]
    }
  }
}

/** Milliseconds one attempt at `recipe` takes: its workSeconds, scaled, give or take a quarter. */
export function attemptMs(recipe: TaskRecipe, scale: number, random: () => number = Math.random): number {
  if (recipe.workSeconds == null) return 150 + random() * 350
  return recipe.workSeconds * scale * 1000 * (0.75 + random() * 0.5)
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await walk(p)))
    else if (e.isFile()) out.push(p)
  }
  return out
}
