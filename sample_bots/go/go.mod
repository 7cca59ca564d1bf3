module durak-referee/sample_bots/go

go 1.19
