"""Every file format creditflow reads: process graphs (node-link JSON, GraphML, DOT),
actor graphs, paging scenarios, ITF traces, expectations files and RabbitMQ config
files (with the credits they give each edge, IN-CONFIG). Each reader turns a
bad file into one error naming the file and the problem (exit 2)."""
