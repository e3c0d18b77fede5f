module plugflow.local/node-pause

go 1.25
