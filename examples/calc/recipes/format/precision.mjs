// Round away float noise (0.1 + 0.2), then print the shortest form.
export const format = n => String(Number(n.toPrecision(12)))
