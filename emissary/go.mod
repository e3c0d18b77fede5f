module plugflow.io/emissary

go 1.22
