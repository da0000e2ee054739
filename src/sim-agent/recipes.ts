// The scripted agent's knowledge of the example project: for each task, the
// file it writes and the approaches it can take, in the order it would try
// them. Read from the shared repository's .sim/ folder.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface TaskRecipe {
  id: string
  file: string
  approaches: string[]
}

export interface Recipes {
  tasks: Map<string, TaskRecipe>
  /** the source an approach writes */
  source: (task: string, approach: string) => Promise<string>
}

export async function loadRecipes (workspace: string): Promise<Recipes> {
  const project = JSON.parse(await readFile(join(workspace, '.sim', 'project.json'), 'utf8')) as { tasks: TaskRecipe[] }
  return {
    tasks: new Map(project.tasks.map(t => [t.id, t])),
    source: async (task, approach) => await readFile(join(workspace, '.sim', 'recipes', task, `${approach}.mjs`), 'utf8')
  }
}
