// The scripted agent's knowledge of the example project: for each task, the
// file it writes and the approaches it can take, in the order it would try
// them. Read from the shared repository's .sim/ folder.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface TaskRecipe {
  id: string
  title?: string
  file: string
  scope?: string[]
  deps?: string[]
  priority?: number
  approaches: string[]
}

export interface Recipes {
  tasks: Map<string, TaskRecipe>
  /** the plan the agent that holds `plan` puts on the board: the project's tasks */
  plan: TaskRecipe[]
  /** the source an approach writes */
  source: (task: string, approach: string) => Promise<string>
}

export async function loadRecipes (workspace: string): Promise<Recipes> {
  const project = JSON.parse(await readFile(join(workspace, '.sim', 'project.json'), 'utf8')) as { tasks: TaskRecipe[] }
  return {
    tasks: new Map(project.tasks.map(t => [t.id, t])),
    plan: project.tasks,
    source: async (task, approach) => await readFile(join(workspace, '.sim', 'recipes', task, `${approach}.mjs`), 'utf8')
  }
}
