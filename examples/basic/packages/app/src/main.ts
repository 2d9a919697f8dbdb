import { greet } from "lib"; console.log(greet("vx"))
